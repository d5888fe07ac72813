// Preloaded into the `osls offline` child (node --require): a server that listens without naming a host binds
// 127.0.0.1 instead of every interface. serverless-offline-aws-eventbridge's PutEvents endpoint and its MQTT
// broker call `listen(port)` with no host; the local stack must be reachable from this machine only.
'use strict';
const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const [first, second] = args;
  if (args.length === 0 || typeof first === 'function') {
    args.unshift(0, LOOPBACK);
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof second !== 'string') args.splice(1, 0, LOOPBACK);
  } else if (
    first !== null &&
    typeof first === 'object' &&
    first.host === undefined &&
    first.path === undefined &&
    first.fd === undefined &&
    first.handle === undefined &&
    first._handle === undefined
  ) {
    args[0] = { ...first, host: LOOPBACK };
  }
  return listen.apply(this, args);
};
