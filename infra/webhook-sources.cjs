// The SSM parameters of the ingest's webhook sources, for its IAM policy (serverless.yml): every source's
// `secretParameter` in FORGEBRIDGE_WEBHOOK_SOURCES, or without it the one default source's
// custom.forgebridge.webhookSecretParameter. Each is granted by name, never by a wildcard. The ingest checks the
// list itself at its cold start; here only what the policy needs is checked, so that `osls package` fails early.
const PARAMETER = /^\/[A-Za-z0-9_.\-/]{1,2047}$/;

module.exports = async ({ resolveVariable }) => {
  const raw = process.env.FORGEBRIDGE_WEBHOOK_SOURCES;
  let names;
  if (raw === undefined || raw === '') {
    names = [await resolveVariable('self:custom.forgebridge.webhookSecretParameter')];
  } else {
    let list;
    try {
      list = JSON.parse(raw);
    } catch {
      list = undefined;
    }
    if (!Array.isArray(list) || list.length === 0) {
      throw new TypeError(
        'environment variable "FORGEBRIDGE_WEBHOOK_SOURCES" must be a non-empty json array',
      );
    }
    names = list.map((source, index) => {
      const name = source === null || typeof source !== 'object' ? undefined : source.secretParameter;
      if (typeof name !== 'string' || name === '') {
        throw new TypeError(`"FORGEBRIDGE_WEBHOOK_SOURCES[${index}].secretParameter" is required`);
      }
      return name;
    });
  }
  for (const name of names) {
    if (typeof name !== 'string' || !PARAMETER.test(name)) {
      throw new TypeError(
        `webhook secret parameter "${name}" must be an ssm parameter name starting with "/"`,
      );
    }
  }
  return {
    parameterArns: [...new Set(names)].map((name) => ({
      'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter${name}`,
    })),
  };
};
