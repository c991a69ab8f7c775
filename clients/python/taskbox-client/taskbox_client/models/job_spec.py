from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.on_conflict import OnConflict
from ..models.reuse import Reuse
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.debounce import Debounce
    from ..models.throttle import Throttle


T = TypeVar("T", bound="JobSpec")


@_attrs_define
class JobSpec:
    """One job to enqueue, as `POST /v1/jobs` takes it (and each item of a
    batch). Unknown fields are refused, so that a misspelled one is not
    silently ignored.

        Example:
            {'input': {'op': 'echo', 'value': 1}, 'task': 'echo'}

        Attributes:
            concurrency_key (None | str | Unset):
            deadline_ms (int | None | Unset):
            debounce (Debounce | None | Unset):
            delay_ms (int | None | Unset):
            expire_after_ms (int | None | Unset): Schedule-to-start timeout (Temporal's): still queued this long
                after it came due, the job fails with kind `expired` and never runs.
            fairness_key (None | str | Unset): The key its tenant's claims share the runners' time by (1 to 64
                bytes; its concurrency key when left out): the tenant's keys are
                served in turn, as tenants are.
            fairness_weight (int | None | Unset): Its fairness key's weight, 1 to 1000 (1 when left out); the weight
                of a key's next job is the key's.
            input_ (Any | Unset):
            on_conflict (None | OnConflict | Unset):
            priority (int | None | Unset):
            queue (None | str | Unset):
            reuse (None | Reuse | Unset):
            run_at (None | str | Unset): An RFC 3339 time; one in the past is now.
            task (None | str | Unset):
            throttle (None | Throttle | Unset):
            unique_key (None | str | Unset):
            workflow (None | str | Unset):
    """

    concurrency_key: None | str | Unset = UNSET
    deadline_ms: int | None | Unset = UNSET
    debounce: Debounce | None | Unset = UNSET
    delay_ms: int | None | Unset = UNSET
    expire_after_ms: int | None | Unset = UNSET
    fairness_key: None | str | Unset = UNSET
    fairness_weight: int | None | Unset = UNSET
    input_: Any | Unset = UNSET
    on_conflict: None | OnConflict | Unset = UNSET
    priority: int | None | Unset = UNSET
    queue: None | str | Unset = UNSET
    reuse: None | Reuse | Unset = UNSET
    run_at: None | str | Unset = UNSET
    task: None | str | Unset = UNSET
    throttle: None | Throttle | Unset = UNSET
    unique_key: None | str | Unset = UNSET
    workflow: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.debounce import Debounce  # noqa: PLC0415
        from ..models.throttle import Throttle  # noqa: PLC0415

        concurrency_key: None | str | Unset
        if isinstance(self.concurrency_key, Unset):
            concurrency_key = UNSET
        else:
            concurrency_key = self.concurrency_key

        deadline_ms: int | None | Unset
        if isinstance(self.deadline_ms, Unset):
            deadline_ms = UNSET
        else:
            deadline_ms = self.deadline_ms

        debounce: dict[str, Any] | None | Unset
        if isinstance(self.debounce, Unset):
            debounce = UNSET
        elif isinstance(self.debounce, Debounce):
            debounce = self.debounce.to_dict()
        else:
            debounce = self.debounce

        delay_ms: int | None | Unset
        if isinstance(self.delay_ms, Unset):
            delay_ms = UNSET
        else:
            delay_ms = self.delay_ms

        expire_after_ms: int | None | Unset
        if isinstance(self.expire_after_ms, Unset):
            expire_after_ms = UNSET
        else:
            expire_after_ms = self.expire_after_ms

        fairness_key: None | str | Unset
        if isinstance(self.fairness_key, Unset):
            fairness_key = UNSET
        else:
            fairness_key = self.fairness_key

        fairness_weight: int | None | Unset
        if isinstance(self.fairness_weight, Unset):
            fairness_weight = UNSET
        else:
            fairness_weight = self.fairness_weight

        input_ = self.input_

        on_conflict: None | str | Unset
        if isinstance(self.on_conflict, Unset):
            on_conflict = UNSET
        elif isinstance(self.on_conflict, OnConflict):
            on_conflict = self.on_conflict.value
        else:
            on_conflict = self.on_conflict

        priority: int | None | Unset
        if isinstance(self.priority, Unset):
            priority = UNSET
        else:
            priority = self.priority

        queue: None | str | Unset
        if isinstance(self.queue, Unset):
            queue = UNSET
        else:
            queue = self.queue

        reuse: None | str | Unset
        if isinstance(self.reuse, Unset):
            reuse = UNSET
        elif isinstance(self.reuse, Reuse):
            reuse = self.reuse.value
        else:
            reuse = self.reuse

        run_at: None | str | Unset
        if isinstance(self.run_at, Unset):
            run_at = UNSET
        else:
            run_at = self.run_at

        task: None | str | Unset
        if isinstance(self.task, Unset):
            task = UNSET
        else:
            task = self.task

        throttle: dict[str, Any] | None | Unset
        if isinstance(self.throttle, Unset):
            throttle = UNSET
        elif isinstance(self.throttle, Throttle):
            throttle = self.throttle.to_dict()
        else:
            throttle = self.throttle

        unique_key: None | str | Unset
        if isinstance(self.unique_key, Unset):
            unique_key = UNSET
        else:
            unique_key = self.unique_key

        workflow: None | str | Unset
        if isinstance(self.workflow, Unset):
            workflow = UNSET
        else:
            workflow = self.workflow

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if concurrency_key is not UNSET:
            field_dict["concurrency_key"] = concurrency_key
        if deadline_ms is not UNSET:
            field_dict["deadline_ms"] = deadline_ms
        if debounce is not UNSET:
            field_dict["debounce"] = debounce
        if delay_ms is not UNSET:
            field_dict["delay_ms"] = delay_ms
        if expire_after_ms is not UNSET:
            field_dict["expire_after_ms"] = expire_after_ms
        if fairness_key is not UNSET:
            field_dict["fairness_key"] = fairness_key
        if fairness_weight is not UNSET:
            field_dict["fairness_weight"] = fairness_weight
        if input_ is not UNSET:
            field_dict["input"] = input_
        if on_conflict is not UNSET:
            field_dict["on_conflict"] = on_conflict
        if priority is not UNSET:
            field_dict["priority"] = priority
        if queue is not UNSET:
            field_dict["queue"] = queue
        if reuse is not UNSET:
            field_dict["reuse"] = reuse
        if run_at is not UNSET:
            field_dict["run_at"] = run_at
        if task is not UNSET:
            field_dict["task"] = task
        if throttle is not UNSET:
            field_dict["throttle"] = throttle
        if unique_key is not UNSET:
            field_dict["unique_key"] = unique_key
        if workflow is not UNSET:
            field_dict["workflow"] = workflow

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.debounce import Debounce  # noqa: PLC0415
        from ..models.throttle import Throttle  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_concurrency_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        concurrency_key = _parse_concurrency_key(d.pop("concurrency_key", UNSET))

        def _parse_deadline_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        deadline_ms = _parse_deadline_ms(d.pop("deadline_ms", UNSET))

        def _parse_debounce(data: object) -> Debounce | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                debounce_type_1 = Debounce.from_dict(data)

                return debounce_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Debounce | None | Unset, data)

        debounce = _parse_debounce(d.pop("debounce", UNSET))

        def _parse_delay_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        delay_ms = _parse_delay_ms(d.pop("delay_ms", UNSET))

        def _parse_expire_after_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        expire_after_ms = _parse_expire_after_ms(d.pop("expire_after_ms", UNSET))

        def _parse_fairness_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        fairness_key = _parse_fairness_key(d.pop("fairness_key", UNSET))

        def _parse_fairness_weight(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        fairness_weight = _parse_fairness_weight(d.pop("fairness_weight", UNSET))

        input_ = d.pop("input", UNSET)

        def _parse_on_conflict(data: object) -> None | OnConflict | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                on_conflict_type_1 = OnConflict(data)

                return on_conflict_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | OnConflict | Unset, data)

        on_conflict = _parse_on_conflict(d.pop("on_conflict", UNSET))

        def _parse_priority(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        priority = _parse_priority(d.pop("priority", UNSET))

        def _parse_queue(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        queue = _parse_queue(d.pop("queue", UNSET))

        def _parse_reuse(data: object) -> None | Reuse | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                reuse_type_1 = Reuse(data)

                return reuse_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Reuse | Unset, data)

        reuse = _parse_reuse(d.pop("reuse", UNSET))

        def _parse_run_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        run_at = _parse_run_at(d.pop("run_at", UNSET))

        def _parse_task(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        task = _parse_task(d.pop("task", UNSET))

        def _parse_throttle(data: object) -> None | Throttle | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                throttle_type_1 = Throttle.from_dict(data)

                return throttle_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Throttle | Unset, data)

        throttle = _parse_throttle(d.pop("throttle", UNSET))

        def _parse_unique_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        unique_key = _parse_unique_key(d.pop("unique_key", UNSET))

        def _parse_workflow(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workflow = _parse_workflow(d.pop("workflow", UNSET))

        job_spec = cls(
            concurrency_key=concurrency_key,
            deadline_ms=deadline_ms,
            debounce=debounce,
            delay_ms=delay_ms,
            expire_after_ms=expire_after_ms,
            fairness_key=fairness_key,
            fairness_weight=fairness_weight,
            input_=input_,
            on_conflict=on_conflict,
            priority=priority,
            queue=queue,
            reuse=reuse,
            run_at=run_at,
            task=task,
            throttle=throttle,
            unique_key=unique_key,
            workflow=workflow,
        )

        return job_spec
