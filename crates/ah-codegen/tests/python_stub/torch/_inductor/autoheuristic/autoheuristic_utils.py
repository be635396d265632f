# Stand-in for torch/_inductor/autoheuristic/autoheuristic_utils.py (spec section 2).
from typing import Any, Callable

Feedback = float
Choice = str
Value = Any

CHOICE_COL = "choice"
FEEDBACK_COL = "feedback"


class AHFeature:
    def __init__(self, name: str, value: Value, is_categorical: bool = False) -> None:
        self.name = name
        self.value = value
        self.is_categorical = is_categorical


class AHOperation:
    def __init__(self, name: str, func: Callable[[Any], Value], is_categorical: bool = False) -> None:
        self.name = name
        self.func = func
        self.is_categorical = is_categorical

    def apply_operation(self, data: Any) -> None:
        data[self.name] = self.func(data)


class AHContext:
    def __init__(self) -> None:
        self.features: list[AHFeature] = []
        self.context_dict: dict[str, Value] = {}

    def add_feature(self, name: str, value: Value, is_categorical: bool = False) -> None:
        self.features.append(AHFeature(name, value, is_categorical=is_categorical))
        self.context_dict[name] = value

    def get_numerical_and_categorical_features(self) -> tuple[list[str], list[str]]:
        numerical = [f.name for f in self.features if not f.is_categorical]
        categorical = [f.name for f in self.features if f.is_categorical]
        return numerical, categorical

    def get_feature_names_csv(self) -> str:
        return ",".join(f.name for f in self.features)

    def get_feature_values_csv(self) -> str:
        return ",".join(str(f.value) for f in self.features)

    def get_value(self, name: str) -> Value:
        return self.context_dict[name]

    def apply_operations(self, operations: list[AHOperation]) -> None:
        for op in operations:
            op.apply_operation(self.context_dict)


class AHMetadata:
    def __init__(self, shared_memory: Any, device_capa: tuple[int, int], choices: list[Choice], name: str) -> None:
        self.shared_memory = shared_memory
        self.device_capa = device_capa
        self.choices = choices
        self.name = name

    def to_dict(self) -> dict[str, Value]:
        return {"shared_memory": self.shared_memory, "device_capa": self.device_capa, "name": self.name}
