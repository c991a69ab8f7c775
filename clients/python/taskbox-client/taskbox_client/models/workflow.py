from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.step_spec import StepSpec
    from ..models.workflow_version import WorkflowVersion


T = TypeVar("T", bound="Workflow")


@_attrs_define
class Workflow:
    """A version as the API shows it: its definition, with its name, version
    and when it was made.
    A workflow version: its definition (as `PUT` took it) with its name,
    version and time.

        Attributes:
            steps (list[StepSpec]):
            created_at (str):
            name (str):
            tenant (str):
            version (int):
            deadline_ms (int | None | Unset): Bounds a job across all its steps, from enqueue.
            input_schema (Any | Unset):
            on_cancel (list[StepSpec] | Unset): Run, with the context, when a job of the workflow is cancelled.
            on_error (list[StepSpec] | Unset): Run, with the context and the error, when a step fails for good.
            queue (None | str | Unset): The queue its jobs go to unless the enqueue names one.
            restore (bool | Unset): Whether a retried job keeps its completed steps' results (and does
                not run them again); `false` starts it over.
            versions (list[WorkflowVersion] | Unset): Every version of the workflow, oldest first (`GET
                /v1/workflows/{name}` only).
    """

    steps: list[StepSpec]
    created_at: str
    name: str
    tenant: str
    version: int
    deadline_ms: int | None | Unset = UNSET
    input_schema: Any | Unset = UNSET
    on_cancel: list[StepSpec] | Unset = UNSET
    on_error: list[StepSpec] | Unset = UNSET
    queue: None | str | Unset = UNSET
    restore: bool | Unset = UNSET
    versions: list[WorkflowVersion] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        steps = []
        for steps_item_data in self.steps:
            steps_item = steps_item_data.to_dict()
            steps.append(steps_item)

        created_at = self.created_at

        name = self.name

        tenant = self.tenant

        version = self.version

        deadline_ms: int | None | Unset
        if isinstance(self.deadline_ms, Unset):
            deadline_ms = UNSET
        else:
            deadline_ms = self.deadline_ms

        input_schema = self.input_schema

        on_cancel: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.on_cancel, Unset):
            on_cancel = []
            for on_cancel_item_data in self.on_cancel:
                on_cancel_item = on_cancel_item_data.to_dict()
                on_cancel.append(on_cancel_item)

        on_error: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.on_error, Unset):
            on_error = []
            for on_error_item_data in self.on_error:
                on_error_item = on_error_item_data.to_dict()
                on_error.append(on_error_item)

        queue: None | str | Unset
        if isinstance(self.queue, Unset):
            queue = UNSET
        else:
            queue = self.queue

        restore = self.restore

        versions: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.versions, Unset):
            versions = []
            for versions_item_data in self.versions:
                versions_item = versions_item_data.to_dict()
                versions.append(versions_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "steps": steps,
                "created_at": created_at,
                "name": name,
                "tenant": tenant,
                "version": version,
            }
        )
        if deadline_ms is not UNSET:
            field_dict["deadline_ms"] = deadline_ms
        if input_schema is not UNSET:
            field_dict["input_schema"] = input_schema
        if on_cancel is not UNSET:
            field_dict["on_cancel"] = on_cancel
        if on_error is not UNSET:
            field_dict["on_error"] = on_error
        if queue is not UNSET:
            field_dict["queue"] = queue
        if restore is not UNSET:
            field_dict["restore"] = restore
        if versions is not UNSET:
            field_dict["versions"] = versions

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.step_spec import StepSpec  # noqa: PLC0415
        from ..models.workflow_version import WorkflowVersion  # noqa: PLC0415

        d = dict(src_dict)
        steps = []
        _steps = d.pop("steps")
        for steps_item_data in _steps:
            steps_item = StepSpec.from_dict(steps_item_data)

            steps.append(steps_item)

        created_at = d.pop("created_at")

        name = d.pop("name")

        tenant = d.pop("tenant")

        version = d.pop("version")

        def _parse_deadline_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        deadline_ms = _parse_deadline_ms(d.pop("deadline_ms", UNSET))

        input_schema = d.pop("input_schema", UNSET)

        _on_cancel = d.pop("on_cancel", UNSET)
        on_cancel: list[StepSpec] | Unset = UNSET
        if _on_cancel is not UNSET:
            on_cancel = []
            for on_cancel_item_data in _on_cancel:
                on_cancel_item = StepSpec.from_dict(on_cancel_item_data)

                on_cancel.append(on_cancel_item)

        _on_error = d.pop("on_error", UNSET)
        on_error: list[StepSpec] | Unset = UNSET
        if _on_error is not UNSET:
            on_error = []
            for on_error_item_data in _on_error:
                on_error_item = StepSpec.from_dict(on_error_item_data)

                on_error.append(on_error_item)

        def _parse_queue(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        queue = _parse_queue(d.pop("queue", UNSET))

        restore = d.pop("restore", UNSET)

        _versions = d.pop("versions", UNSET)
        versions: list[WorkflowVersion] | Unset = UNSET
        if _versions is not UNSET:
            versions = []
            for versions_item_data in _versions:
                versions_item = WorkflowVersion.from_dict(versions_item_data)

                versions.append(versions_item)

        workflow = cls(
            steps=steps,
            created_at=created_at,
            name=name,
            tenant=tenant,
            version=version,
            deadline_ms=deadline_ms,
            input_schema=input_schema,
            on_cancel=on_cancel,
            on_error=on_error,
            queue=queue,
            restore=restore,
            versions=versions,
        )

        workflow.additional_properties = d
        return workflow

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
