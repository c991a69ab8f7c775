"""Contains all the data models used in inputs/outputs"""

from .abi import Abi
from .attempt import Attempt
from .attempt_log import AttemptLog
from .attempt_page import AttemptPage
from .attempt_step import AttemptStep
from .backoff import Backoff
from .backoff_kind import BackoffKind
from .batch import Batch
from .batch_request import BatchRequest
from .before_job import BeforeJob
from .bundle import Bundle
from .bundle_component import BundleComponent
from .bundle_grants import BundleGrants
from .bundle_job import BundleJob
from .bundle_limits import BundleLimits
from .by import By
from .cache_spec import CacheSpec
from .callback import Callback
from .component import Component
from .concurrency import Concurrency
from .concurrency_mode import ConcurrencyMode
from .debounce import Debounce
from .debounce_view import DebounceView
from .delivery_page import DeliveryPage
from .delivery_status import DeliveryStatus
from .delivery_view import DeliveryView
from .difference import Difference
from .different import Different
from .ended import Ended
from .error_answer import ErrorAnswer
from .error_body import ErrorBody
from .error_code import ErrorCode
from .error_kind import ErrorKind
from .event import Event
from .event_job import EventJob
from .event_page import EventPage
from .event_type import EventType
from .export_line import ExportLine
from .fuel_sums import FuelSums
from .health import Health
from .item_error import ItemError
from .item_error_body import ItemErrorBody
from .job import Job
from .job_detail import JobDetail
from .job_error_view import JobErrorView
from .job_gauges import JobGauges
from .job_page import JobPage
from .job_series import JobSeries
from .job_spec import JobSpec
from .job_status import JobStatus
from .jobs_list_status_type_1 import JobsListStatusType1
from .last_job import LastJob
from .level import Level
from .limits_spec import LimitsSpec
from .log_line import LogLine
from .network_spec import NetworkSpec
from .network_tally import NetworkTally
from .new_tenant import NewTenant
from .new_token_body import NewTokenBody
from .new_webhook_body import NewWebhookBody
from .on_conflict import OnConflict
from .operate_document_response_200 import OperateDocumentResponse200
from .outcome_type_0 import OutcomeType0
from .outcome_type_0_status import OutcomeType0Status
from .outcome_type_1 import OutcomeType1
from .outcome_type_1_status import OutcomeType1Status
from .outcome_type_2 import OutcomeType2
from .outcome_type_2_status import OutcomeType2Status
from .overlap import Overlap
from .parent_close import ParentClose
from .progress_record import ProgressRecord
from .put_secret_body import PutSecretBody
from .queue import Queue
from .queue_depth import QueueDepth
from .queue_list import QueueList
from .queue_switched import QueueSwitched
from .quota_source import QuotaSource
from .quota_view import QuotaView
from .quotas import Quotas
from .report import Report
from .resume_body import ResumeBody
from .retried_many import RetriedMany
from .retry_body import RetryBody
from .retry_filter import RetryFilter
from .retry_many_body import RetryManyBody
from .retry_policy import RetryPolicy
from .retry_version import RetryVersion
from .reuse import Reuse
from .rollout_share import RolloutShare
from .rollout_spec import RolloutSpec
from .rollout_view import RolloutView
from .run import Run
from .schedule import Schedule
from .schedule_list import ScheduleList
from .schedule_spec import ScheduleSpec
from .scope import Scope
from .secret import Secret
from .secret_list import SecretList
from .series import Series
from .source import Source
from .span import Span
from .split import Split
from .stack import Stack
from .step import Step
from .step_spec import StepSpec
from .stream_frame import StreamFrame
from .task import Task
from .task_defined import TaskDefined
from .task_list import TaskList
from .task_ref import TaskRef
from .task_spec import TaskSpec
from .task_summary import TaskSummary
from .task_version import TaskVersion
from .tenant_body import TenantBody
from .tenant_list import TenantList
from .tenant_view import TenantView
from .tenant_view_quotas import TenantViewQuotas
from .tenants_export_by import TenantsExportBy
from .tenants_export_format import TenantsExportFormat
from .tenants_series_span import TenantsSeriesSpan
from .throttle import Throttle
from .token_list import TokenList
from .token_minted import TokenMinted
from .token_view import TokenView
from .usage import Usage
from .usage_export import UsageExport
from .verify_request import VerifyRequest
from .version_figures import VersionFigures
from .version_state import VersionState
from .wait_series import WaitSeries
from .webhook import Webhook
from .webhook_list import WebhookList
from .who_am_i import WhoAmI
from .window import Window
from .workflow import Workflow
from .workflow_list import WorkflowList
from .workflow_ref import WorkflowRef
from .workflow_spec import WorkflowSpec
from .workflow_version import WorkflowVersion

__all__ = (
    "Abi",
    "Attempt",
    "AttemptLog",
    "AttemptPage",
    "AttemptStep",
    "Backoff",
    "BackoffKind",
    "Batch",
    "BatchRequest",
    "BeforeJob",
    "Bundle",
    "BundleComponent",
    "BundleGrants",
    "BundleJob",
    "BundleLimits",
    "By",
    "CacheSpec",
    "Callback",
    "Component",
    "Concurrency",
    "ConcurrencyMode",
    "Debounce",
    "DebounceView",
    "DeliveryPage",
    "DeliveryStatus",
    "DeliveryView",
    "Difference",
    "Different",
    "Ended",
    "ErrorAnswer",
    "ErrorBody",
    "ErrorCode",
    "ErrorKind",
    "Event",
    "EventJob",
    "EventPage",
    "EventType",
    "ExportLine",
    "FuelSums",
    "Health",
    "ItemError",
    "ItemErrorBody",
    "Job",
    "JobDetail",
    "JobErrorView",
    "JobGauges",
    "JobPage",
    "JobSeries",
    "JobsListStatusType1",
    "JobSpec",
    "JobStatus",
    "LastJob",
    "Level",
    "LimitsSpec",
    "LogLine",
    "NetworkSpec",
    "NetworkTally",
    "NewTenant",
    "NewTokenBody",
    "NewWebhookBody",
    "OnConflict",
    "OperateDocumentResponse200",
    "OutcomeType0",
    "OutcomeType0Status",
    "OutcomeType1",
    "OutcomeType1Status",
    "OutcomeType2",
    "OutcomeType2Status",
    "Overlap",
    "ParentClose",
    "ProgressRecord",
    "PutSecretBody",
    "Queue",
    "QueueDepth",
    "QueueList",
    "QueueSwitched",
    "Quotas",
    "QuotaSource",
    "QuotaView",
    "Report",
    "ResumeBody",
    "RetriedMany",
    "RetryBody",
    "RetryFilter",
    "RetryManyBody",
    "RetryPolicy",
    "RetryVersion",
    "Reuse",
    "RolloutShare",
    "RolloutSpec",
    "RolloutView",
    "Run",
    "Schedule",
    "ScheduleList",
    "ScheduleSpec",
    "Scope",
    "Secret",
    "SecretList",
    "Series",
    "Source",
    "Span",
    "Split",
    "Stack",
    "Step",
    "StepSpec",
    "StreamFrame",
    "Task",
    "TaskDefined",
    "TaskList",
    "TaskRef",
    "TaskSpec",
    "TaskSummary",
    "TaskVersion",
    "TenantBody",
    "TenantList",
    "TenantsExportBy",
    "TenantsExportFormat",
    "TenantsSeriesSpan",
    "TenantView",
    "TenantViewQuotas",
    "Throttle",
    "TokenList",
    "TokenMinted",
    "TokenView",
    "Usage",
    "UsageExport",
    "VerifyRequest",
    "VersionFigures",
    "VersionState",
    "WaitSeries",
    "Webhook",
    "WebhookList",
    "WhoAmI",
    "Window",
    "Workflow",
    "WorkflowList",
    "WorkflowRef",
    "WorkflowSpec",
    "WorkflowVersion",
)
