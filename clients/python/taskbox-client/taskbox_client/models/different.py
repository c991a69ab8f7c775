from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

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
    """A run whose outcome differs: both outcomes, and where the outputs differ.

    Attributes:
        candidate (OutcomeType0 | OutcomeType1 | OutcomeType2): How a run ended, as the report compares it.
        job (str):
        recorded (OutcomeType0 | OutcomeType1 | OutcomeType2): How a run ended, as the report compares it.
        diff (list[Difference] | Unset): Where the outputs differ, when both completed (at most
            `MAX_DIFFS_PER_RUN` places; `diff_total` counts them all).
        diff_total (int | Unset):
    """

    candidate: OutcomeType0 | OutcomeType1 | OutcomeType2
    job: str
    recorded: OutcomeType0 | OutcomeType1 | OutcomeType2
    diff: list[Difference] | Unset = UNSET
    diff_total: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
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

        diff: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.diff, Unset):
            diff = []
            for diff_item_data in self.diff:
                diff_item = diff_item_data.to_dict()
                diff.append(diff_item)

        diff_total = self.diff_total

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candidate": candidate,
                "job": job,
                "recorded": recorded,
            }
        )
        if diff is not UNSET:
            field_dict["diff"] = diff
        if diff_total is not UNSET:
            field_dict["diff_total"] = diff_total

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

        _diff = d.pop("diff", UNSET)
        diff: list[Difference] | Unset = UNSET
        if _diff is not UNSET:
            diff = []
            for diff_item_data in _diff:
                diff_item = Difference.from_dict(diff_item_data)

                diff.append(diff_item)

        diff_total = d.pop("diff_total", UNSET)

        different = cls(
            candidate=candidate,
            job=job,
            recorded=recorded,
            diff=diff,
            diff_total=diff_total,
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
