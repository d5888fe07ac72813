// CloudFormation's intrinsic functions, resolved the way a deploy would resolve them, with the physical names and
// ARNs given for the template's logical ids: `Ref`, `Fn::GetAtt`, `Fn::Join`, `Fn::Sub`, `Fn::Select`, `Fn::Split`
// and the pseudo parameters. The IAM test resolves each role's policies with the ARNs the local stack used. Anything
// else (a condition, an import, a logical id with no counterpart) is an error naming it: a policy is never guessed.

/** What one logical id resolves to. */
export interface ResolvedResource {
  /** `Ref`'s value (a table's, bucket's or bus's name). */
  ref: string;
  /** `Fn::GetAtt`'s values by attribute (`Arn`, `Name`). */
  attributes: Readonly<Record<string, string>>;
}

/** The account, region and resources the template is resolved against. */
export interface IntrinsicContext {
  partition: string;
  region: string;
  account: string;
  stackName: string;
  /** `AWS::StackId`: the stack's ARN, where a template refers to it. */
  stackId?: string;
  resources: Readonly<Record<string, ResolvedResource>>;
}

/** Thrown for what cannot be resolved. */
export class UnresolvedIntrinsicError extends Error {
  override readonly name = 'UnresolvedIntrinsicError';
}

const NO_VALUE = Symbol('AWS::NoValue');

function pseudo(name: string, context: IntrinsicContext): string | typeof NO_VALUE | undefined {
  switch (name) {
    case 'AWS::Partition':
      return context.partition;
    case 'AWS::Region':
      return context.region;
    case 'AWS::AccountId':
      return context.account;
    case 'AWS::StackName':
      return context.stackName;
    case 'AWS::StackId':
      return context.stackId;
    case 'AWS::URLSuffix':
      return 'amazonaws.com';
    case 'AWS::NoValue':
      return NO_VALUE;
    default:
      return undefined;
  }
}

function ref(name: string, context: IntrinsicContext): string | typeof NO_VALUE {
  const value = pseudo(name, context) ?? context.resources[name]?.ref;
  if (value === undefined) throw new UnresolvedIntrinsicError(`no value for { Ref: "${name}" }`);
  return value;
}

function getAtt(id: string, attribute: string, context: IntrinsicContext): string {
  const value = context.resources[id]?.attributes[attribute];
  if (value === undefined)
    throw new UnresolvedIntrinsicError(`no value for { "Fn::GetAtt": "${id}.${attribute}" }`);
  return value;
}

function text(value: unknown, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new UnresolvedIntrinsicError(`${where} needs a string, got ${JSON.stringify(value)}`);
}

function sub(template: string, variables: Record<string, unknown>, context: IntrinsicContext): string {
  return template.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
    // `${!Literal}` stands for `${Literal}`.
    if (name.startsWith('!')) return `\${${name.slice(1)}}`;
    if (name in variables) return text(variables[name], `Fn::Sub variable "${name}"`);
    const dot = name.indexOf('.');
    if (dot > 0 && pseudo(name, context) === undefined)
      return getAtt(name.slice(0, dot), name.slice(dot + 1), context);
    const value = ref(name, context);
    if (value === NO_VALUE) throw new UnresolvedIntrinsicError(`${whole} in Fn::Sub`);
    return value;
  });
}

function resolveValue(value: unknown, context: IntrinsicContext): unknown {
  if (Array.isArray(value)) {
    return value.map((item) => resolveValue(item, context)).filter((item) => item !== NO_VALUE);
  }
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const [key, argument] = entries[0] ?? [];
  if (entries.length === 1 && key !== undefined && (key === 'Ref' || key.startsWith('Fn::'))) {
    return intrinsic(key, argument, context);
  }
  const out: Record<string, unknown> = {};
  for (const [name, item] of entries) {
    const resolved = resolveValue(item, context);
    if (resolved !== NO_VALUE) out[name] = resolved;
  }
  return out;
}

function intrinsic(name: string, argument: unknown, context: IntrinsicContext): unknown {
  switch (name) {
    case 'Ref':
      return ref(text(argument, 'Ref'), context);
    case 'Fn::GetAtt': {
      const [id, attribute] = Array.isArray(argument)
        ? argument.map((part) => text(resolveValue(part, context), 'Fn::GetAtt'))
        : text(argument, 'Fn::GetAtt').split(/\.(.*)/);
      return getAtt(id ?? '', attribute ?? '', context);
    }
    case 'Fn::Join': {
      const [separator, list] = argument as [unknown, unknown];
      const items = resolveValue(list, context);
      if (!Array.isArray(items)) throw new UnresolvedIntrinsicError('Fn::Join needs a list');
      return items.map((item) => text(item, 'Fn::Join')).join(text(separator, 'Fn::Join'));
    }
    case 'Fn::Sub': {
      if (typeof argument === 'string') return sub(argument, {}, context);
      const [template, variables] = argument as [unknown, unknown];
      return sub(
        text(template, 'Fn::Sub'),
        resolveValue(variables ?? {}, context) as Record<string, unknown>,
        context,
      );
    }
    case 'Fn::Select': {
      const [index, list] = argument as [unknown, unknown];
      const items = resolveValue(list, context);
      const at = Number(resolveValue(index, context));
      if (!Array.isArray(items) || !(at in items))
        throw new UnresolvedIntrinsicError('Fn::Select out of range');
      return items[at];
    }
    case 'Fn::Split': {
      const [separator, source] = argument as [unknown, unknown];
      return text(resolveValue(source, context), 'Fn::Split').split(text(separator, 'Fn::Split'));
    }
    default:
      throw new UnresolvedIntrinsicError(`${name} is not resolved here`);
  }
}

/**
 * `value` with every intrinsic function resolved against `context` (`AWS::NoValue` leaves drop out).
 *
 * @example
 * ```ts
 * resolveIntrinsics({ 'Fn::GetAtt': ['DedupeTable', 'Arn'] }, context); // 'arn:aws:dynamodb:…:table/…'
 * ```
 * @see https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/intrinsic-function-reference.html
 */
export function resolveIntrinsics(value: unknown, context: IntrinsicContext): unknown {
  return resolveValue(value, context);
}
