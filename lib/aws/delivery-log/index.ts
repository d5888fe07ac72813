/**
 * The delivery log: one record per request the ingest answers, subscribers' outcomes beside it, in DynamoDB.
 */
export {
  type DeliveryDetails,
  type DeliveryListPage,
  type DeliveryListQuery,
  DeliveryLog,
  type DeliveryLogEntry,
  type DeliveryLogOptions,
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
} from './delivery-log.js';
export {
  forgeHeaders,
  isFrontDoorHeader,
  isMaskedHeader,
  MASKED,
  maskHeaders,
  SIGNATURE_HEADERS,
} from './mask-headers.js';
export { type DeliveryReportOptions, type ReportableEvent, withDeliveryReport } from './report.js';
