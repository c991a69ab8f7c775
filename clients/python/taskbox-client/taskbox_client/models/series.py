from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.span import Span
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.job_series import JobSeries
    from ..models.split import Split
    from ..models.stack import Stack
    from ..models.wait_series import WaitSeries


T = TypeVar("T", bound="Series")


@_attrs_define
class Series:
    """The charts' series: every array has a value for each of `times`.

    Attributes:
        bucket_ms (int):
        from_ (str): The first bucket's start and the end of the last (RFC 3339); the
            last is the one now runs in, so far.
        fuel (Split): A figure split by tenant and by task, each a stack of series.
        jobs (JobSeries): Jobs a bucket.
        oldest_wait_ms (list[int]): The longest any queue's oldest job had waited (ms), as sampled.
        queue_depth (list[Stack]): Jobs due and not started, the most the sampler saw in the bucket:
            by queue for one tenant, by tenant across them. 0 where no sample
            was taken (the server was down, or the bucket just began).
        span (Span): How far back the series reach.
        start_wait_ms (WaitSeries): How long the jobs that started in a bucket had waited from when they
            were due, estimated within the class of a histogram each fell in
            (classes from 1 ms to an hour); null for a bucket where none started.
        times (list[int]): Each bucket's start, in Unix seconds.
        to (str):
        wall_ms (Split): A figure split by tenant and by task, each a stack of series.
        tenant (None | str | Unset): Whose: a tenant, or null for every tenant (the admin's).
    """

    bucket_ms: int
    from_: str
    fuel: Split
    jobs: JobSeries
    oldest_wait_ms: list[int]
    queue_depth: list[Stack]
    span: Span
    start_wait_ms: WaitSeries
    times: list[int]
    to: str
    wall_ms: Split
    tenant: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        bucket_ms = self.bucket_ms

        from_ = self.from_

        fuel = self.fuel.to_dict()

        jobs = self.jobs.to_dict()

        oldest_wait_ms = self.oldest_wait_ms

        queue_depth = []
        for queue_depth_item_data in self.queue_depth:
            queue_depth_item = queue_depth_item_data.to_dict()
            queue_depth.append(queue_depth_item)

        span = self.span.value

        start_wait_ms = self.start_wait_ms.to_dict()

        times = self.times

        to = self.to

        wall_ms = self.wall_ms.to_dict()

        tenant: None | str | Unset
        if isinstance(self.tenant, Unset):
            tenant = UNSET
        else:
            tenant = self.tenant

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "bucket_ms": bucket_ms,
                "from": from_,
                "fuel": fuel,
                "jobs": jobs,
                "oldest_wait_ms": oldest_wait_ms,
                "queue_depth": queue_depth,
                "span": span,
                "start_wait_ms": start_wait_ms,
                "times": times,
                "to": to,
                "wall_ms": wall_ms,
            }
        )
        if tenant is not UNSET:
            field_dict["tenant"] = tenant

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_series import JobSeries  # noqa: PLC0415
        from ..models.split import Split  # noqa: PLC0415
        from ..models.stack import Stack  # noqa: PLC0415
        from ..models.wait_series import WaitSeries  # noqa: PLC0415

        d = dict(src_dict)
        bucket_ms = d.pop("bucket_ms")

        from_ = d.pop("from")

        fuel = Split.from_dict(d.pop("fuel"))

        jobs = JobSeries.from_dict(d.pop("jobs"))

        oldest_wait_ms = cast(list[int], d.pop("oldest_wait_ms"))

        queue_depth = []
        _queue_depth = d.pop("queue_depth")
        for queue_depth_item_data in _queue_depth:
            queue_depth_item = Stack.from_dict(queue_depth_item_data)

            queue_depth.append(queue_depth_item)

        span = Span(d.pop("span"))

        start_wait_ms = WaitSeries.from_dict(d.pop("start_wait_ms"))

        times = cast(list[int], d.pop("times"))

        to = d.pop("to")

        wall_ms = Split.from_dict(d.pop("wall_ms"))

        def _parse_tenant(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tenant = _parse_tenant(d.pop("tenant", UNSET))

        series = cls(
            bucket_ms=bucket_ms,
            from_=from_,
            fuel=fuel,
            jobs=jobs,
            oldest_wait_ms=oldest_wait_ms,
            queue_depth=queue_depth,
            span=span,
            start_wait_ms=start_wait_ms,
            times=times,
            to=to,
            wall_ms=wall_ms,
            tenant=tenant,
        )

        series.additional_properties = d
        return series

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
