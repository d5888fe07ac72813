/**
 * The delivery log: one record per request the ingest answers, subscribers' outcomes beside it, in DynamoDB.
 */
export { DeliveryLog, type DeliveryLogOptions } from './delivery-log.js';
export { detailsOfHook, hooksOf } from './hooks.js';
export {
  forgeHeaders,
  isFrontDoorHeader,
  isMaskedHeader,
  MASKED,
  maskHeaders,
  SIGNATURE_HEADERS,
} from './mask-headers.js';
export { type DeliveryReportOptions, type ReportableEvent, withDeliveryReport } from './report.js';
export {
  type DeliveryDetails,
  type DeliveryListPage,
  type DeliveryListQuery,
  type DeliveryLogEntry,
  type DeliveryOutcome,
  DeliveryOutcomes,
  type DeliveryRecord,
  type DeliveryVerdict,
  DeliveryVerdicts,
  type DiagnosisEntry,
  type PayloadOmitted,
  type RecordResult,
  type SubscriberOutcome,
  type SubscriberReport,
} from './schema.js';
