from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attempt_log import AttemptLog
    from ..models.attempt_step import AttemptStep
    from ..models.job_error_view import JobErrorView
    from ..models.network_tally import NetworkTally
    from ..models.task_ref import TaskRef


T = TypeVar("T", bound="Attempt")


@_attrs_define
class Attempt:
    """One finished attempt.

    Attributes:
        attempt (int):
        duration_ms (int):
        finished_at (str):
        fuel_used (int):
        outcome (str): `completed`, `failed`, `retried`, `snoozed`, `waiting`, `cancelled`
            or `fallback`.
        peak_memory_bytes (int):
        started_at (str):
        task (TaskRef): A task version pinned into a job.
        error (JobErrorView | None | Unset):
        log (AttemptLog | None | Unset):
        network (NetworkTally | None | Unset):
        step (AttemptStep | None | Unset):
    """

    attempt: int
    duration_ms: int
    finished_at: str
    fuel_used: int
    outcome: str
    peak_memory_bytes: int
    started_at: str
    task: TaskRef
    error: JobErrorView | None | Unset = UNSET
    log: AttemptLog | None | Unset = UNSET
    network: NetworkTally | None | Unset = UNSET
    step: AttemptStep | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.attempt_log import AttemptLog  # noqa: PLC0415
        from ..models.attempt_step import AttemptStep  # noqa: PLC0415
        from ..models.job_error_view import JobErrorView  # noqa: PLC0415
        from ..models.network_tally import NetworkTally  # noqa: PLC0415

        attempt = self.attempt

        duration_ms = self.duration_ms

        finished_at = self.finished_at

        fuel_used = self.fuel_used

        outcome = self.outcome

        peak_memory_bytes = self.peak_memory_bytes

        started_at = self.started_at

        task = self.task.to_dict()

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, JobErrorView):
            error = self.error.to_dict()
        else:
            error = self.error

        log: dict[str, Any] | None | Unset
        if isinstance(self.log, Unset):
            log = UNSET
        elif isinstance(self.log, AttemptLog):
            log = self.log.to_dict()
        else:
            log = self.log

        network: dict[str, Any] | None | Unset
        if isinstance(self.network, Unset):
            network = UNSET
        elif isinstance(self.network, NetworkTally):
            network = self.network.to_dict()
        else:
            network = self.network

        step: dict[str, Any] | None | Unset
        if isinstance(self.step, Unset):
            step = UNSET
        elif isinstance(self.step, AttemptStep):
            step = self.step.to_dict()
        else:
            step = self.step

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "duration_ms": duration_ms,
                "finished_at": finished_at,
                "fuel_used": fuel_used,
                "outcome": outcome,
                "peak_memory_bytes": peak_memory_bytes,
                "started_at": started_at,
                "task": task,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if log is not UNSET:
            field_dict["log"] = log
        if network is not UNSET:
            field_dict["network"] = network
        if step is not UNSET:
            field_dict["step"] = step

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt_log import AttemptLog  # noqa: PLC0415
        from ..models.attempt_step import AttemptStep  # noqa: PLC0415
        from ..models.job_error_view import JobErrorView  # noqa: PLC0415
        from ..models.network_tally import NetworkTally  # noqa: PLC0415
        from ..models.task_ref import TaskRef  # noqa: PLC0415

        d = dict(src_dict)
        attempt = d.pop("attempt")

        duration_ms = d.pop("duration_ms")

        finished_at = d.pop("finished_at")

        fuel_used = d.pop("fuel_used")

        outcome = d.pop("outcome")

        peak_memory_bytes = d.pop("peak_memory_bytes")

        started_at = d.pop("started_at")

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

        def _parse_log(data: object) -> AttemptLog | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                log_type_1 = AttemptLog.from_dict(data)

                return log_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AttemptLog | None | Unset, data)

        log = _parse_log(d.pop("log", UNSET))

        def _parse_network(data: object) -> NetworkTally | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                network_type_1 = NetworkTally.from_dict(data)

                return network_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(NetworkTally | None | Unset, data)

        network = _parse_network(d.pop("network", UNSET))

        def _parse_step(data: object) -> AttemptStep | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                step_type_1 = AttemptStep.from_dict(data)

                return step_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(AttemptStep | None | Unset, data)

        step = _parse_step(d.pop("step", UNSET))

        attempt = cls(
            attempt=attempt,
            duration_ms=duration_ms,
            finished_at=finished_at,
            fuel_used=fuel_used,
            outcome=outcome,
            peak_memory_bytes=peak_memory_bytes,
            started_at=started_at,
            task=task,
            error=error,
            log=log,
            network=network,
            step=step,
        )

        attempt.additional_properties = d
        return attempt

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
