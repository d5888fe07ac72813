// osls always compiles its default role (IamRoleLambdaExecution), and serverless-iam-roles-per-function builds
// each function's own role from it as a template without removing it. Once every function has its own, the default
// role is used by nothing, yet it may write every log group of the stage and to X-Ray: this plugin leaves it out of
// the template when nothing refers to it (it runs after serverless-iam-roles-per-function, on the same hook).
'use strict';

const DEFAULT_ROLE = 'IamRoleLambdaExecution';

class DropDefaultRole {
  constructor(serverless) {
    this.hooks = {
      'before:package:finalize': () => {
        const template = serverless.service.provider.compiledCloudFormationTemplate;
        const role = template.Resources[DEFAULT_ROLE];
        if (role === undefined) return;
        delete template.Resources[DEFAULT_ROLE];
        // A reference anywhere (`Ref` or `Fn::GetAtt` of the role): keep it after all.
        if (JSON.stringify(template).includes(`"${DEFAULT_ROLE}"`)) template.Resources[DEFAULT_ROLE] = role;
      },
    };
  }
}

module.exports = DropDefaultRole;
