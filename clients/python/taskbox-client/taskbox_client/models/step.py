from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job_error_view import JobErrorView
    from ..models.task_ref import TaskRef


T = TypeVar("T", bound="Step")


@_attrs_define
class Step:
    """One stage of a job.

    Attributes:
        attempts (int):
        kind (str): `step`, `fallback`, `on_error` or `on_cancel`.
        max_attempts (int):
        name (str):
        seq (int): Its place among the job's stages, from 0 (what an attempt's
            `step.seq` names).
        status (str): The job's status while it is the active stage; else `pending`,
            `completed`, `failed`, `cancelled` or `skipped`.
        task (TaskRef): A task version pinned into a job.
        error (JobErrorView | None | Unset):
        finished_at (None | str | Unset):
        output (Any | Unset):
        started_at (None | str | Unset):
    """

    attempts: int
    kind: str
    max_attempts: int
    name: str
    seq: int
    status: str
    task: TaskRef
    error: JobErrorView | None | Unset = UNSET
    finished_at: None | str | Unset = UNSET
    output: Any | Unset = UNSET
    started_at: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.job_error_view import JobErrorView  # noqa: PLC0415

        attempts = self.attempts

        kind = self.kind

        max_attempts = self.max_attempts

        name = self.name

        seq = self.seq

        status = self.status

        task = self.task.to_dict()

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, JobErrorView):
            error = self.error.to_dict()
        else:
            error = self.error

        finished_at: None | str | Unset
        if isinstance(self.finished_at, Unset):
            finished_at = UNSET
        else:
            finished_at = self.finished_at

        output = self.output

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        else:
            started_at = self.started_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "kind": kind,
                "max_attempts": max_attempts,
                "name": name,
                "seq": seq,
                "status": status,
                "task": task,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if finished_at is not UNSET:
            field_dict["finished_at"] = finished_at
        if output is not UNSET:
            field_dict["output"] = output
        if started_at is not UNSET:
            field_dict["started_at"] = started_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_error_view import JobErrorView  # noqa: PLC0415
        from ..models.task_ref import TaskRef  # noqa: PLC0415

        d = dict(src_dict)
        attempts = d.pop("attempts")

        kind = d.pop("kind")

        max_attempts = d.pop("max_attempts")

        name = d.pop("name")

        seq = d.pop("seq")

        status = d.pop("status")

        task = TaskRef.from_dict(d.pop("task"))

        def _parse_error(data: object) -> JobErrorView | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_1 = JobErrorView.from_dict(data)

                return error_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobErrorView | None | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_finished_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        finished_at = _parse_finished_at(d.pop("finished_at", UNSET))

        output = d.pop("output", UNSET)

        def _parse_started_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        step = cls(
            attempts=attempts,
            kind=kind,
            max_attempts=max_attempts,
            name=name,
            seq=seq,
            status=status,
            task=task,
            error=error,
            finished_at=finished_at,
            output=output,
            started_at=started_at,
        )

        step.additional_properties = d
        return step

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
