from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Run")


@_attrs_define
class Run:
    """One recorded job run again.

    Attributes:
        candidate_fuel (int):
        job (str): The recorded job.
        recorded_fuel (int):
        same (bool):
        version (int): The version the recorded job ran.
    """

    candidate_fuel: int
    job: str
    recorded_fuel: int
    same: bool
    version: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        candidate_fuel = self.candidate_fuel

        job = self.job

        recorded_fuel = self.recorded_fuel

        same = self.same

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candidate_fuel": candidate_fuel,
                "job": job,
                "recorded_fuel": recorded_fuel,
                "same": same,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        candidate_fuel = d.pop("candidate_fuel")

        job = d.pop("job")

        recorded_fuel = d.pop("recorded_fuel")

        same = d.pop("same")

        version = d.pop("version")

        run = cls(
            candidate_fuel=candidate_fuel,
            job=job,
            recorded_fuel=recorded_fuel,
            same=same,
            version=version,
        )

        run.additional_properties = d
        return run

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
