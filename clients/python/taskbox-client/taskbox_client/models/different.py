from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.difference import Difference
    from ..models.outcome_type_0 import OutcomeType0
    from ..models.outcome_type_1 import OutcomeType1
    from ..models.outcome_type_2 import OutcomeType2


T = TypeVar("T", bound="Different")


@_attrs_define
class Different:
    """A run whose outcome differs: both outcomes, and where the outputs
    first differ.

        Attributes:
            candidate (OutcomeType0 | OutcomeType1 | OutcomeType2): How a run ended, as a report keeps it: an output by its
                hash.
            job (str):
            recorded (OutcomeType0 | OutcomeType1 | OutcomeType2): How a run ended, as a report keeps it: an output by its
                hash.
            diff_total (int | Unset): How many places they differ at in all.
            first_difference (Difference | None | Unset):
    """

    candidate: OutcomeType0 | OutcomeType1 | OutcomeType2
    job: str
    recorded: OutcomeType0 | OutcomeType1 | OutcomeType2
    diff_total: int | Unset = UNSET
    first_difference: Difference | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.difference import Difference  # noqa: PLC0415
        from ..models.outcome_type_0 import OutcomeType0  # noqa: PLC0415
        from ..models.outcome_type_1 import OutcomeType1  # noqa: PLC0415

        candidate: dict[str, Any]
        if isinstance(self.candidate, OutcomeType0):
            candidate = self.candidate.to_dict()
        elif isinstance(self.candidate, OutcomeType1):
            candidate = self.candidate.to_dict()
        else:
            candidate = self.candidate.to_dict()

        job = self.job

        recorded: dict[str, Any]
        if isinstance(self.recorded, OutcomeType0):
            recorded = self.recorded.to_dict()
        elif isinstance(self.recorded, OutcomeType1):
            recorded = self.recorded.to_dict()
        else:
            recorded = self.recorded.to_dict()

        diff_total = self.diff_total

        first_difference: dict[str, Any] | None | Unset
        if isinstance(self.first_difference, Unset):
            first_difference = UNSET
        elif isinstance(self.first_difference, Difference):
            first_difference = self.first_difference.to_dict()
        else:
            first_difference = self.first_difference

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candidate": candidate,
                "job": job,
                "recorded": recorded,
            }
        )
        if diff_total is not UNSET:
            field_dict["diff_total"] = diff_total
        if first_difference is not UNSET:
            field_dict["first_difference"] = first_difference

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.difference import Difference  # noqa: PLC0415
        from ..models.outcome_type_0 import OutcomeType0  # noqa: PLC0415
        from ..models.outcome_type_1 import OutcomeType1  # noqa: PLC0415
        from ..models.outcome_type_2 import OutcomeType2  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_candidate(data: object) -> OutcomeType0 | OutcomeType1 | OutcomeType2:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_0 = OutcomeType0.from_dict(data)

                return componentsschemas_outcome_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_1 = OutcomeType1.from_dict(data)

                return componentsschemas_outcome_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_outcome_type_2 = OutcomeType2.from_dict(data)

            return componentsschemas_outcome_type_2

        candidate = _parse_candidate(d.pop("candidate"))

        job = d.pop("job")

        def _parse_recorded(data: object) -> OutcomeType0 | OutcomeType1 | OutcomeType2:
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_0 = OutcomeType0.from_dict(data)

                return componentsschemas_outcome_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                componentsschemas_outcome_type_1 = OutcomeType1.from_dict(data)

                return componentsschemas_outcome_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            componentsschemas_outcome_type_2 = OutcomeType2.from_dict(data)

            return componentsschemas_outcome_type_2

        recorded = _parse_recorded(d.pop("recorded"))

        diff_total = d.pop("diff_total", UNSET)

        def _parse_first_difference(data: object) -> Difference | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                first_difference_type_1 = Difference.from_dict(data)

                return first_difference_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Difference | None | Unset, data)

        first_difference = _parse_first_difference(d.pop("first_difference", UNSET))

        different = cls(
            candidate=candidate,
            job=job,
            recorded=recorded,
            diff_total=diff_total,
            first_difference=first_difference,
        )

        different.additional_properties = d
        return different

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
