from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.parent_close import ParentClose
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.cache_spec import CacheSpec
    from ..models.concurrency import Concurrency
    from ..models.debounce import Debounce
    from ..models.limits_spec import LimitsSpec
    from ..models.network_spec import NetworkSpec
    from ..models.retry_policy import RetryPolicy
    from ..models.rollout_spec import RolloutSpec
    from ..models.throttle import Throttle


T = TypeVar("T", bound="TaskSpec")


@_attrs_define
class TaskSpec:
    """The body of `PUT /v1/tasks/{name}`. Unknown fields are refused.

    Attributes:
        component (str): The component's digest, as `POST /v1/components` answered it. Example:
            sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.
        cache (CacheSpec | None | Unset):
        concurrency (Concurrency | None | Unset):
        deadline_ms (int | None | Unset): Bounds a job across all its attempts, from enqueue (`deadline_exceeded`);
            an enqueue may set its own.
        debounce (Debounce | None | Unset):
        deterministic (bool | Unset): Its guests see a clock that starts at the job's creation and
            advances with the fuel spent, and random bytes seeded from the
            job's id: every attempt of a job, on any machine, gives the same
            output and fuel. Such a task may not declare `network` or `secrets`,
            and its guests cannot start other jobs.
        fallback (None | str | Unset): The task that runs when a job of this one fails for good.
        input_schema (Any | Unset):
        limits (LimitsSpec | None | Unset):
        network (NetworkSpec | None | Unset):
        on_fail (None | str | Unset): A task enqueued when a job of this one fails for good, on
            `{"job": {…}, "error": {…}}`, in the same transaction as the end.
        on_success (None | str | Unset): A task enqueued when a job of this one completes, on
            `{"job": {…}, "output": …}`, in the same transaction as the end.
        output_schema (Any | Unset):
        parent_close (None | ParentClose | Unset):
        queue (None | str | Unset): The queue its jobs go to unless the enqueue names one (default `default`).
        retry (None | RetryPolicy | Unset):
        rollout (None | RolloutSpec | Unset):
        secrets (list[str] | Unset): The tenant's secrets its guests may read through
            `wasi:config/store`, by name; they see no other. Example: ['STRIPE_KEY'].
        throttle (None | Throttle | Unset):
    """

    component: str
    cache: CacheSpec | None | Unset = UNSET
    concurrency: Concurrency | None | Unset = UNSET
    deadline_ms: int | None | Unset = UNSET
    debounce: Debounce | None | Unset = UNSET
    deterministic: bool | Unset = UNSET
    fallback: None | str | Unset = UNSET
    input_schema: Any | Unset = UNSET
    limits: LimitsSpec | None | Unset = UNSET
    network: NetworkSpec | None | Unset = UNSET
    on_fail: None | str | Unset = UNSET
    on_success: None | str | Unset = UNSET
    output_schema: Any | Unset = UNSET
    parent_close: None | ParentClose | Unset = UNSET
    queue: None | str | Unset = UNSET
    retry: None | RetryPolicy | Unset = UNSET
    rollout: None | RolloutSpec | Unset = UNSET
    secrets: list[str] | Unset = UNSET
    throttle: None | Throttle | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.cache_spec import CacheSpec  # noqa: PLC0415
        from ..models.concurrency import Concurrency  # noqa: PLC0415
        from ..models.debounce import Debounce  # noqa: PLC0415
        from ..models.limits_spec import LimitsSpec  # noqa: PLC0415
        from ..models.network_spec import NetworkSpec  # noqa: PLC0415
        from ..models.retry_policy import RetryPolicy  # noqa: PLC0415
        from ..models.rollout_spec import RolloutSpec  # noqa: PLC0415
        from ..models.throttle import Throttle  # noqa: PLC0415

        component = self.component

        cache: dict[str, Any] | None | Unset
        if isinstance(self.cache, Unset):
            cache = UNSET
        elif isinstance(self.cache, CacheSpec):
            cache = self.cache.to_dict()
        else:
            cache = self.cache

        concurrency: dict[str, Any] | None | Unset
        if isinstance(self.concurrency, Unset):
            concurrency = UNSET
        elif isinstance(self.concurrency, Concurrency):
            concurrency = self.concurrency.to_dict()
        else:
            concurrency = self.concurrency

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

        deterministic = self.deterministic

        fallback: None | str | Unset
        if isinstance(self.fallback, Unset):
            fallback = UNSET
        else:
            fallback = self.fallback

        input_schema = self.input_schema

        limits: dict[str, Any] | None | Unset
        if isinstance(self.limits, Unset):
            limits = UNSET
        elif isinstance(self.limits, LimitsSpec):
            limits = self.limits.to_dict()
        else:
            limits = self.limits

        network: dict[str, Any] | None | Unset
        if isinstance(self.network, Unset):
            network = UNSET
        elif isinstance(self.network, NetworkSpec):
            network = self.network.to_dict()
        else:
            network = self.network

        on_fail: None | str | Unset
        if isinstance(self.on_fail, Unset):
            on_fail = UNSET
        else:
            on_fail = self.on_fail

        on_success: None | str | Unset
        if isinstance(self.on_success, Unset):
            on_success = UNSET
        else:
            on_success = self.on_success

        output_schema = self.output_schema

        parent_close: None | str | Unset
        if isinstance(self.parent_close, Unset):
            parent_close = UNSET
        elif isinstance(self.parent_close, ParentClose):
            parent_close = self.parent_close.value
        else:
            parent_close = self.parent_close

        queue: None | str | Unset
        if isinstance(self.queue, Unset):
            queue = UNSET
        else:
            queue = self.queue

        retry: dict[str, Any] | None | Unset
        if isinstance(self.retry, Unset):
            retry = UNSET
        elif isinstance(self.retry, RetryPolicy):
            retry = self.retry.to_dict()
        else:
            retry = self.retry

        rollout: dict[str, Any] | None | Unset
        if isinstance(self.rollout, Unset):
            rollout = UNSET
        elif isinstance(self.rollout, RolloutSpec):
            rollout = self.rollout.to_dict()
        else:
            rollout = self.rollout

        secrets: list[str] | Unset = UNSET
        if not isinstance(self.secrets, Unset):
            secrets = self.secrets

        throttle: dict[str, Any] | None | Unset
        if isinstance(self.throttle, Unset):
            throttle = UNSET
        elif isinstance(self.throttle, Throttle):
            throttle = self.throttle.to_dict()
        else:
            throttle = self.throttle

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "component": component,
            }
        )
        if cache is not UNSET:
            field_dict["cache"] = cache
        if concurrency is not UNSET:
            field_dict["concurrency"] = concurrency
        if deadline_ms is not UNSET:
            field_dict["deadline_ms"] = deadline_ms
        if debounce is not UNSET:
            field_dict["debounce"] = debounce
        if deterministic is not UNSET:
            field_dict["deterministic"] = deterministic
        if fallback is not UNSET:
            field_dict["fallback"] = fallback
        if input_schema is not UNSET:
            field_dict["input_schema"] = input_schema
        if limits is not UNSET:
            field_dict["limits"] = limits
        if network is not UNSET:
            field_dict["network"] = network
        if on_fail is not UNSET:
            field_dict["on_fail"] = on_fail
        if on_success is not UNSET:
            field_dict["on_success"] = on_success
        if output_schema is not UNSET:
            field_dict["output_schema"] = output_schema
        if parent_close is not UNSET:
            field_dict["parent_close"] = parent_close
        if queue is not UNSET:
            field_dict["queue"] = queue
        if retry is not UNSET:
            field_dict["retry"] = retry
        if rollout is not UNSET:
            field_dict["rollout"] = rollout
        if secrets is not UNSET:
            field_dict["secrets"] = secrets
        if throttle is not UNSET:
            field_dict["throttle"] = throttle

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.cache_spec import CacheSpec  # noqa: PLC0415
        from ..models.concurrency import Concurrency  # noqa: PLC0415
        from ..models.debounce import Debounce  # noqa: PLC0415
        from ..models.limits_spec import LimitsSpec  # noqa: PLC0415
        from ..models.network_spec import NetworkSpec  # noqa: PLC0415
        from ..models.retry_policy import RetryPolicy  # noqa: PLC0415
        from ..models.rollout_spec import RolloutSpec  # noqa: PLC0415
        from ..models.throttle import Throttle  # noqa: PLC0415

        d = dict(src_dict)
        component = d.pop("component")

        def _parse_cache(data: object) -> CacheSpec | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                cache_type_1 = CacheSpec.from_dict(data)

                return cache_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CacheSpec | None | Unset, data)

        cache = _parse_cache(d.pop("cache", UNSET))

        def _parse_concurrency(data: object) -> Concurrency | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                concurrency_type_1 = Concurrency.from_dict(data)

                return concurrency_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Concurrency | None | Unset, data)

        concurrency = _parse_concurrency(d.pop("concurrency", UNSET))

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

        deterministic = d.pop("deterministic", UNSET)

        def _parse_fallback(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        fallback = _parse_fallback(d.pop("fallback", UNSET))

        input_schema = d.pop("input_schema", UNSET)

        def _parse_limits(data: object) -> LimitsSpec | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                limits_type_1 = LimitsSpec.from_dict(data)

                return limits_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(LimitsSpec | None | Unset, data)

        limits = _parse_limits(d.pop("limits", UNSET))

        def _parse_network(data: object) -> NetworkSpec | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                network_type_1 = NetworkSpec.from_dict(data)

                return network_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(NetworkSpec | None | Unset, data)

        network = _parse_network(d.pop("network", UNSET))

        def _parse_on_fail(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        on_fail = _parse_on_fail(d.pop("on_fail", UNSET))

        def _parse_on_success(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        on_success = _parse_on_success(d.pop("on_success", UNSET))

        output_schema = d.pop("output_schema", UNSET)

        def _parse_parent_close(data: object) -> None | ParentClose | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                parent_close_type_1 = ParentClose(data)

                return parent_close_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ParentClose | Unset, data)

        parent_close = _parse_parent_close(d.pop("parent_close", UNSET))

        def _parse_queue(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        queue = _parse_queue(d.pop("queue", UNSET))

        def _parse_retry(data: object) -> None | RetryPolicy | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                retry_type_1 = RetryPolicy.from_dict(data)

                return retry_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RetryPolicy | Unset, data)

        retry = _parse_retry(d.pop("retry", UNSET))

        def _parse_rollout(data: object) -> None | RolloutSpec | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                rollout_type_1 = RolloutSpec.from_dict(data)

                return rollout_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RolloutSpec | Unset, data)

        rollout = _parse_rollout(d.pop("rollout", UNSET))

        secrets = cast(list[str], d.pop("secrets", UNSET))

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

        task_spec = cls(
            component=component,
            cache=cache,
            concurrency=concurrency,
            deadline_ms=deadline_ms,
            debounce=debounce,
            deterministic=deterministic,
            fallback=fallback,
            input_schema=input_schema,
            limits=limits,
            network=network,
            on_fail=on_fail,
            on_success=on_success,
            output_schema=output_schema,
            parent_close=parent_close,
            queue=queue,
            retry=retry,
            rollout=rollout,
            secrets=secrets,
            throttle=throttle,
        )

        return task_spec
