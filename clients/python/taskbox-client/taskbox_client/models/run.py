from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

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
        candidate_sha256 (None | str | Unset): The candidate's output's hash, when it completed.
        recorded_sha256 (None | str | Unset): The recorded output's hash (as in `Outcome`), when it completed.
    """

    candidate_fuel: int
    job: str
    recorded_fuel: int
    same: bool
    version: int
    candidate_sha256: None | str | Unset = UNSET
    recorded_sha256: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        candidate_fuel = self.candidate_fuel

        job = self.job

        recorded_fuel = self.recorded_fuel

        same = self.same

        version = self.version

        candidate_sha256: None | str | Unset
        if isinstance(self.candidate_sha256, Unset):
            candidate_sha256 = UNSET
        else:
            candidate_sha256 = self.candidate_sha256

        recorded_sha256: None | str | Unset
        if isinstance(self.recorded_sha256, Unset):
            recorded_sha256 = UNSET
        else:
            recorded_sha256 = self.recorded_sha256

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
        if candidate_sha256 is not UNSET:
            field_dict["candidate_sha256"] = candidate_sha256
        if recorded_sha256 is not UNSET:
            field_dict["recorded_sha256"] = recorded_sha256

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        candidate_fuel = d.pop("candidate_fuel")

        job = d.pop("job")

        recorded_fuel = d.pop("recorded_fuel")

        same = d.pop("same")

        version = d.pop("version")

        def _parse_candidate_sha256(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        candidate_sha256 = _parse_candidate_sha256(d.pop("candidate_sha256", UNSET))

        def _parse_recorded_sha256(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        recorded_sha256 = _parse_recorded_sha256(d.pop("recorded_sha256", UNSET))

        run = cls(
            candidate_fuel=candidate_fuel,
            job=job,
            recorded_fuel=recorded_fuel,
            same=same,
            version=version,
            candidate_sha256=candidate_sha256,
            recorded_sha256=recorded_sha256,
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
