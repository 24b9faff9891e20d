"""config.json as dtbench writes it for one worker, read and checked key by key.

A missing key, a wrong type or a value out of range is a ConfigError naming the key, the value
and what is expected (the worker exits 2 with it). Keys this reader does not know are ignored,
so dtbench may add some before the worker uses them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping

MODELS = ("mlp", "lenet5", "alexnet", "vgg16", "resnet18", "resnet50")
FORMATS = ("idx", "cifar10", "cifar100")
TRANSPORTS = ("none", "ddp")
PROFILES = ("matched", "defaults")  # parity.py says what each sets
PRECISIONS = ("fp32", "tf32")
DDP_HOOKS = ("timed", "builtin")  # timed: each bucket's allreduce through phases.py's hook


class ConfigError(ValueError):
    """Bad input: names the key, what it holds and what was expected."""


@dataclass
class DataConfig:
    format: str
    path: str
    resize: int
    mean: List[float]
    std: List[float]
    augment: bool


@dataclass
class WorkerConfig:
    model: str
    input: List[int]
    classes: int
    batch: int
    epochs: int
    max_steps: int
    optimizer: Dict[str, Any]
    threads: int
    seed: int
    data: DataConfig
    eval_max_samples: int
    rank: int
    world: int
    transport: str
    bucket_mb: float
    init_method: str
    iface: str
    timeout_s: float
    save_weights_path: str
    trace_steps: int
    profile: str = "matched"
    ddp_hook: str = "timed"
    precision: str = "fp32"
    extra: Dict[str, Any] = field(default_factory=dict)


def _describe(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, str) else f"'{value}'"


class _Reader:
    def __init__(self, source: Mapping[str, Any], prefix: str) -> None:
        if not isinstance(source, Mapping):
            raise ConfigError(f"config.json: {prefix.rstrip('.') or 'the file'} must be a JSON object, "
                              f"got {_describe(source)}")
        self.source, self.prefix = source, prefix

    def _get(self, key: str, default: Any) -> Any:
        if key in self.source:
            return self.source[key]
        if default is _REQUIRED:
            raise ConfigError(f"config.json: key {self.prefix}{key} is missing")
        return default

    def fail(self, key: str, value: Any, expected: str) -> None:
        raise ConfigError(f"config.json: {self.prefix}{key} is {_describe(value)}; expected {expected}")

    def integer(self, key: str, minimum: int | None = None, default: Any = None) -> int:
        default = _REQUIRED if default is None else default
        value = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, value, "an integer" + (f" >= {minimum}" if minimum is not None else ""))
        if minimum is not None and value < minimum:
            self.fail(key, value, f"an integer >= {minimum}")
        return int(value)

    def number(self, key: str, minimum: float | None = None, default: Any = None, exclusive: bool = False) -> float:
        default = _REQUIRED if default is None else default
        value = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(key, value, "a number")
        if minimum is not None and (value <= minimum if exclusive else value < minimum):
            self.fail(key, value, f"a number {'>' if exclusive else '>='} {minimum}")
        return float(value)

    def string(self, key: str, choices: tuple | None = None, default: Any = None) -> str:
        default = _REQUIRED if default is None else default
        value = self._get(key, default)
        if not isinstance(value, str):
            self.fail(key, value, "a string")
        if choices is not None and value not in choices:
            self.fail(key, value, "one of " + ", ".join(choices))
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self._get(key, default)
        if not isinstance(value, bool):
            self.fail(key, value, "true or false")
        return value

    def numbers(self, key: str, length: int | None = None) -> List[float]:
        value = self._get(key, _REQUIRED)
        ok = isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        if not ok or (length is not None and len(value) != length):
            self.fail(key, value, f"a list of {length if length is not None else ''} numbers".replace("  ", " "))
        return [float(v) for v in value]

    def child(self, key: str) -> "_Reader":
        return _Reader(self._get(key, _REQUIRED), f"{self.prefix}{key}.")


_REQUIRED = object()


def parse_config(raw: Mapping[str, Any]) -> WorkerConfig:
    top = _Reader(raw, "")
    shape = top.numbers("input", 3)
    if any(s != int(s) or s < 1 for s in shape):
        top.fail("input", raw["input"], "[C, H, W], three positive integers")
    data = top.child("data")
    norm = data.child("normalization")
    mean, std = norm.numbers("mean"), norm.numbers("std")
    channels = int(shape[0])
    if len(mean) != channels:
        norm.fail("mean", mean, f"{channels} values, one per channel of input {[int(s) for s in shape]}")
    if len(std) != channels or any(not s > 0 for s in std):
        norm.fail("std", std, f"{channels} positive values, one per channel of input {[int(s) for s in shape]}")
    # dtbench's blueprint has augment under dataset:; either place is read.
    augment = data.boolean("augment", top.boolean("augment", False))
    data_config = DataConfig(format=data.string("format", FORMATS), path=data.string("path"),
                             resize=data.integer("resize", 0, default=0), mean=mean, std=std, augment=augment)
    optimizer = raw.get("optimizer")
    if not isinstance(optimizer, Mapping):
        top.fail("optimizer", optimizer, "an object with name, lr, momentum, weight_decay, ...")
    world = top.integer("world", 1)
    rank = top.integer("rank", 0)
    if rank >= world:
        top.fail("rank", rank, f"an integer in 0..{world - 1} (world is {world})")
    transport = top.string("transport", TRANSPORTS)
    init_method = top.string("init_method", default="")
    if transport == "ddp" and world > 1 and not init_method:
        top.fail("init_method", init_method, "an address such as tcp://127.0.0.1:29500 for a world of 2 or more")
    # pytorch: the engine's own keys (blueprint pytorch.profile, pytorch.ddp_hook), optional.
    engine = top.child("pytorch") if "pytorch" in raw else _Reader({}, "pytorch.")
    # precision is the run's (blueprint precision:), optional for configs written before it.
    precision = top.string("precision", PRECISIONS, default="fp32")
    if precision == "tf32" and top.string("device", default="cpu") == "cpu":
        top.fail("precision", precision, "fp32 on the cpu (tf32 needs a GPU: the CPU computes in fp32 only)")
    config = WorkerConfig(
        model=top.string("model", MODELS), input=[int(s) for s in shape], classes=top.integer("classes", 1),
        batch=top.integer("batch", 1), epochs=top.integer("epochs", 1), max_steps=top.integer("max_steps", 0, default=0),
        optimizer=dict(optimizer), threads=top.integer("threads", 0, default=0), seed=top.integer("seed", default=1),
        data=data_config, eval_max_samples=top.integer("eval_max_samples", 0, default=0), rank=rank, world=world,
        transport=transport, bucket_mb=top.number("bucket_mb", 0.0, default=25.0), init_method=init_method,
        iface=top.string("iface", default=""), timeout_s=top.number("timeout_s", 0.0, default=60.0, exclusive=True),
        save_weights_path=top.string("save_weights_path", default=""),
        trace_steps=top.integer("trace_steps", 0, default=0), profile=engine.string("profile", PROFILES, "matched"),
        ddp_hook=engine.string("ddp_hook", DDP_HOOKS, "timed"), precision=precision)
    return config


def load_config(path: str) -> WorkerConfig:
    try:
        with open(path) as f:
            raw = json.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path} does not exist: dtbench writes config.json before starting the worker") from None
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path} is not valid JSON: {error}") from None
    return parse_config(raw)
