from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.different import Different
    from ..models.fuel_sums import FuelSums
    from ..models.run import Run


T = TypeVar("T", bound="Report")


@_attrs_define
class Report:
    """What a verification found.

    Attributes:
        candidate_failures (int): Runs the candidate did not complete.
        component (str):
        differences (list[Different]):
        different (int): Runs whose outcome or output did not.
        each (list[Run]): Every run, in the order of the sample (newest recorded job first).
        fuel (FuelSums): Fuel recorded and fuel now, summed over the runs.
        requests_refused (bool): The task declares outbound HTTP or secrets: the candidate ran with
            every request refused and no secret, so its runs that need them
            differ for that reason.
        runs (int): Recorded jobs run again.
        same (int): Runs whose outcome and output matched.
        task (str):
        version (int): The version whose limits the candidate ran under.
        missing (list[str] | Unset): Recorded jobs gone (pruned) before they were run again.
    """

    candidate_failures: int
    component: str
    differences: list[Different]
    different: int
    each: list[Run]
    fuel: FuelSums
    requests_refused: bool
    runs: int
    same: int
    task: str
    version: int
    missing: list[str] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        candidate_failures = self.candidate_failures

        component = self.component

        differences = []
        for differences_item_data in self.differences:
            differences_item = differences_item_data.to_dict()
            differences.append(differences_item)

        different = self.different

        each = []
        for each_item_data in self.each:
            each_item = each_item_data.to_dict()
            each.append(each_item)

        fuel = self.fuel.to_dict()

        requests_refused = self.requests_refused

        runs = self.runs

        same = self.same

        task = self.task

        version = self.version

        missing: list[str] | Unset = UNSET
        if not isinstance(self.missing, Unset):
            missing = self.missing

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "candidate_failures": candidate_failures,
                "component": component,
                "differences": differences,
                "different": different,
                "each": each,
                "fuel": fuel,
                "requests_refused": requests_refused,
                "runs": runs,
                "same": same,
                "task": task,
                "version": version,
            }
        )
        if missing is not UNSET:
            field_dict["missing"] = missing

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.different import Different  # noqa: PLC0415
        from ..models.fuel_sums import FuelSums  # noqa: PLC0415
        from ..models.run import Run  # noqa: PLC0415

        d = dict(src_dict)
        candidate_failures = d.pop("candidate_failures")

        component = d.pop("component")

        differences = []
        _differences = d.pop("differences")
        for differences_item_data in _differences:
            differences_item = Different.from_dict(differences_item_data)

            differences.append(differences_item)

        different = d.pop("different")

        each = []
        _each = d.pop("each")
        for each_item_data in _each:
            each_item = Run.from_dict(each_item_data)

            each.append(each_item)

        fuel = FuelSums.from_dict(d.pop("fuel"))

        requests_refused = d.pop("requests_refused")

        runs = d.pop("runs")

        same = d.pop("same")

        task = d.pop("task")

        version = d.pop("version")

        missing = cast(list[str], d.pop("missing", UNSET))

        report = cls(
            candidate_failures=candidate_failures,
            component=component,
            differences=differences,
            different=different,
            each=each,
            fuel=fuel,
            requests_refused=requests_refused,
            runs=runs,
            same=same,
            task=task,
            version=version,
            missing=missing,
        )

        report.additional_properties = d
        return report

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
