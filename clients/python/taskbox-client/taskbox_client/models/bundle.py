from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.attempt import Attempt
    from ..models.bundle_component import BundleComponent
    from ..models.bundle_grants import BundleGrants
    from ..models.bundle_job import BundleJob
    from ..models.bundle_limits import BundleLimits


T = TypeVar("T", bound="Bundle")


@_attrs_define
class Bundle:
    """What replaying one attempt needs.

    Attributes:
        attempt (Attempt): One finished attempt.
        component (BundleComponent): The pinned component.
        format_ (str): `taskbox-replay/1`.
        grants (BundleGrants): What the task granted its guests: the hosts they could call and the
            names of the secrets they could read, never the values. A replay
            grants neither unless it is told to.
        input_ (Any): The input that attempt got.
        job (BundleJob): What the guest saw of its job.
        limits (BundleLimits): The limits the attempt ran under.
        deterministic (bool | Unset): Whether the task is deterministic: its attempt ran on the job's
            virtual clock and seeded random bytes, and a replay must give the
            same output and fuel.
        output (Any | Unset): The output the attempt gave, when it completed the job.
    """

    attempt: Attempt
    component: BundleComponent
    format_: str
    grants: BundleGrants
    input_: Any
    job: BundleJob
    limits: BundleLimits
    deterministic: bool | Unset = UNSET
    output: Any | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt.to_dict()

        component = self.component.to_dict()

        format_ = self.format_

        grants = self.grants.to_dict()

        input_ = self.input_

        job = self.job.to_dict()

        limits = self.limits.to_dict()

        deterministic = self.deterministic

        output = self.output

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "component": component,
                "format": format_,
                "grants": grants,
                "input": input_,
                "job": job,
                "limits": limits,
            }
        )
        if deterministic is not UNSET:
            field_dict["deterministic"] = deterministic
        if output is not UNSET:
            field_dict["output"] = output

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt import Attempt  # noqa: PLC0415
        from ..models.bundle_component import BundleComponent  # noqa: PLC0415
        from ..models.bundle_grants import BundleGrants  # noqa: PLC0415
        from ..models.bundle_job import BundleJob  # noqa: PLC0415
        from ..models.bundle_limits import BundleLimits  # noqa: PLC0415

        d = dict(src_dict)
        attempt = Attempt.from_dict(d.pop("attempt"))

        component = BundleComponent.from_dict(d.pop("component"))

        format_ = d.pop("format")

        grants = BundleGrants.from_dict(d.pop("grants"))

        input_ = d.pop("input")

        job = BundleJob.from_dict(d.pop("job"))

        limits = BundleLimits.from_dict(d.pop("limits"))

        deterministic = d.pop("deterministic", UNSET)

        output = d.pop("output", UNSET)

        bundle = cls(
            attempt=attempt,
            component=component,
            format_=format_,
            grants=grants,
            input_=input_,
            job=job,
            limits=limits,
            deterministic=deterministic,
            output=output,
        )

        bundle.additional_properties = d
        return bundle

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
