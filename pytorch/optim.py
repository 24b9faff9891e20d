"""dtbench's optimizers (core/optim/optimizer.cpp) as PyTorch optimizers.

dtbench's update rules are torch.optim's, so torch's own classes are used:
  sgd   g' = g + wd·p;  v = μ·v + g' (v starts at the first g');  p -= lr·(nesterov ? g' + μ·v : v)
        = torch.optim.SGD with dampening 0.
  adam  g' = g + wd·p (L2 added to the gradient, not AdamW's decoupled decay);
        m = β1·m + (1−β1)·g';  v = β2·v + (1−β2)·g'²;
        p -= lr / (1 − β1^t) · m / (sqrt(v) / sqrt(1 − β2^t) + ε)
        = torch.optim.Adam (amsgrad off). dtbench multiplies by a float 1/sqrt(1 − β2^t) where
        torch divides by a double sqrt(1 − β2^t): the two differ in the last bit only.
The single-tensor (foreach=False) paths are used: the same arithmetic as the loops above.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import torch


class OptimizerConfigError(ValueError):
    """An unknown optimizer or a hyper-parameter out of range, naming the key."""


def make_optimizer(config: Mapping[str, Any], params: Iterable[torch.nn.Parameter]) -> torch.optim.Optimizer:
    name = str(config.get("name", "sgd"))
    lr = float(config.get("lr", 0.01))
    momentum = float(config.get("momentum", 0.0))
    weight_decay = float(config.get("weight_decay", 0.0))
    # The same checks as dtbench's make_optimizer, with its messages.
    if not lr > 0:
        raise OptimizerConfigError(f"optimizer.lr must be > 0, got {lr}")
    if not 0 <= momentum < 1:
        raise OptimizerConfigError(f"optimizer.momentum must be in [0, 1), got {momentum}")
    if not weight_decay >= 0:
        raise OptimizerConfigError(f"optimizer.weight_decay must be >= 0, got {weight_decay}")
    if name == "sgd":
        nesterov = bool(config.get("nesterov", False))
        if nesterov and momentum == 0:
            # torch refuses Nesterov without momentum; dtbench's rule then is plain SGD (v = g').
            nesterov = False
        return torch.optim.SGD(params, lr=lr, momentum=momentum, dampening=0.0, weight_decay=weight_decay,
                               nesterov=nesterov, foreach=False)
    if name == "adam":
        beta1 = float(config.get("beta1", 0.9))
        beta2 = float(config.get("beta2", 0.999))
        epsilon = float(config.get("epsilon", 1e-8))
        for key, value in (("beta1", beta1), ("beta2", beta2)):
            if not 0 <= value < 1:
                raise OptimizerConfigError(f"optimizer.{key} must be in [0, 1), got {value}")
        if not epsilon >= 0:
            raise OptimizerConfigError(f"optimizer.epsilon must be >= 0, got {epsilon}")
        return torch.optim.Adam(params, lr=lr, betas=(beta1, beta2), eps=epsilon, weight_decay=weight_decay,
                                amsgrad=False, foreach=False)
    raise OptimizerConfigError(f"optimizer.name '{name}' is not known; choose sgd or adam")
