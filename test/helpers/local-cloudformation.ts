/**
 * A DescribeStacks endpoint of ours on 127.0.0.1, for the CLI's stage tests: it speaks the AWS query protocol
 * the SDK's CloudFormationClient uses (a form-encoded POST with `Action=DescribeStacks`, an XML answer in the
 * `http://cloudformation.amazonaws.com/doc/2010-05-15/` namespace), as the CloudFormation API reference
 * describes DescribeStacks: `Stacks.member` with `StackName`, `CreationTime`, `StackStatus` and
 * `Outputs.member` (`OutputKey`, `OutputValue`); an unknown stack is a 400 `ValidationError` "Stack with id
 * <name> does not exist". Any other action is refused.
 *
 * @see https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_DescribeStacks.html
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running stand-in. */
export interface LocalCloudFormation {
  readonly url: string;
  /** The stacks named in each DescribeStacks request, in order. */
  readonly asked: string[];
  close(): Promise<void>;
}

const NS = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function error(code: string, message: string): string {
  return `<ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type><Code>${code}</Code><Message>${xml(message)}</Message></Error><RequestId>local</RequestId></ErrorResponse>`;
}

/** Starts the stand-in with `stacks`: stack name to its outputs. */
export async function startLocalCloudFormation(
  stacks: Record<string, Record<string, string>>,
): Promise<LocalCloudFormation> {
  const asked: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const send = (status: number, body: string) =>
        response.writeHead(status, { 'content-type': 'text/xml' }).end(body);
      if (request.method !== 'POST' || form.get('Action') !== 'DescribeStacks') {
        send(400, error('InvalidAction', 'only DescribeStacks is served here'));
        return;
      }
      const name = form.get('StackName') ?? '';
      asked.push(name);
      const outputs = stacks[name];
      if (outputs === undefined) {
        send(400, error('ValidationError', `Stack with id ${name} does not exist`));
        return;
      }
      const members = Object.entries(outputs)
        .map(
          ([key, value]) =>
            `<member><OutputKey>${xml(key)}</OutputKey><OutputValue>${xml(value)}</OutputValue></member>`,
        )
        .join('');
      send(
        200,
        `<DescribeStacksResponse xmlns="${NS}"><DescribeStacksResult><Stacks><member><StackName>${xml(name)}</StackName><CreationTime>2026-11-01T00:00:00.000Z</CreationTime><StackStatus>UPDATE_COMPLETE</StackStatus><Outputs>${members}</Outputs></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>local</RequestId></ResponseMetadata></DescribeStacksResponse>`,
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
