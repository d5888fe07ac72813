/** `forgebridge replay --help`: what it does, locally, on AWS and for many, with examples and exit codes. */
export const REPLAY_HELP = `
Local: re-sends the stored raw body and headers (signature headers signed again with the secret) to the
ingest; the same delivery id gets the dedupe's answer, "--fresh-id" a new delivery.
AWS ("--stage"): a claim-checked delivery is put on the bus again from its S3 object (the entry the ingest
builds); any other starts an archive replay (StartReplay) of its time window into the bus and follows it.
An archive replay re-sends every archived event of the window that the rules match, not only this one.
Two hooks (two GitHub Apps on one URL) get one event under one delivery id, each its own delivery: such an id
is replayed with "--hook <id>" (the hook's record: its body, its headers, "detail.hook"); one hook needs none.

Many ("--since"): the deliveries one subscriber failed ("--outcome error", the default) or reported on at all
("--outcome any") in a window, by source and event, are counted with a sample first, then sent to that subscriber
alone: its function is invoked with each delivery's event, as its rule would hand it (the local stack's through
serverless-offline, a stage's through AWS Lambda), "--rate" a second; the other subscribers are not run again.
Off a terminal the send needs "--yes". A run that was stopped is resumed by running it again: what the subscriber
reported "ok" since is no longer selected. On a stage ("--stage") the default is the bus archive's replay
(StartReplay over the deliveries' window, only to the subscriber's rules: it re-sends every event of that window
they match); what the archive no longer holds is sent to the function directly; "--via invoke" sends all directly.
Without "--subscriber" the window's deliveries ("--outcome error": those some subscriber failed; "any": all) are
put on the bus again as new events under their delivery ids, "--rate" a second, each marked with the subscribers
that had reported it "ok": those skip it (a "replay skipped" line), the others run. Ordered subscribers (fed by
the stream, not the bus) do not get them.

Examples:
  $ forgebridge replay --since 2h --subscriber onIssuesOpened --dry-run
  $ forgebridge replay --since 2026-11-23T08:00Z --until 2026-11-23T10:00Z --event push --subscriber onPush --yes
  $ forgebridge replay --since 1h --event pull_request.opened --dry-run
  $ forgebridge replay 0b1e4c2a-...
  $ forgebridge replay 0b1e4c2a-... --fresh-id --json
  $ forgebridge replay 0b1e4c2a-... --source github --hook 2202
  $ forgebridge replay 0b1e4c2a-... --stage prod --archive arn:aws:events:eu-west-1:123456789012:archive/forgebridge-prod

Exit codes: 0 replayed (a 2xx answer, published, replay completed), 1 not (non-2xx, refused, replay failed),
2 bad input or unknown delivery, 3 log or URL not reachable.`;
