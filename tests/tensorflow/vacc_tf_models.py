# SPDX-License-Identifier: Apache-2.0
"""Model checks on VACC, inside the TF venv: a Keras MLP trained, a CNN run forward,
a linear model trained by tf.compat.v1.train's optimizers (train_v1).

Each model names the ops it needs a VACC kernel for. While any is missing the
model is not run at all (with soft placement TF would quietly run it on the
CPU and it would "pass"); the result records the missing kernels and
vacc_in_tf.py turns that into a failure, or, with --expect-missing-kernels,
into a pass that fails again as soon as nothing is missing (then drop the
flag in tests/tensorflow/meson.build and the model really runs).

When everything is there: the model runs eagerly under tf.device('/VACC:0')
with the same seed on VACC and on the CPU; its outputs (and gradients) must
be on VACC, match the CPU within tolerance, and the MLP's loss must fall.
The lists of needed ops are what these models execute in TF 2.21 with
Keras 3; if TF places one of them differently the device checks say so.
train_v1 needs vacc's variable kernels, which exist where TF exports the
variable helpers (2.6-2.18): the optimizers update variables (and their
slots) that live on VACC, so the update ops can only run there.
"""

import numpy as np
import tensorflow as tf

NEEDS = {
    # Dense+ReLU forward/backward, sparse softmax cross-entropy, SGD's update.
    "mlp": ["MatMul", "BiasAdd", "Relu", "ReluGrad", "BiasAddGrad",
            "SparseSoftmaxCrossEntropyWithLogits", "Mean", "Mul"],
    # Conv2D+ReLU, max pooling, a dense head and softmax.
    "cnn": ["Conv2D", "BiasAdd", "Relu", "MaxPool", "MatMul", "Softmax"],
    # A linear least-squares fit and tf.compat.v1.train's optimizers.
    "train_v1": ["MatMul", "Square", "Mean", "ResourceApplyGradientDescent",
                 "ResourceApplyMomentum", "ResourceApplyAdam", "ResourceApplyRMSProp",
                 "ResourceApplyCenteredRMSProp", "ResourceApplyAdagrad"],
}
V1_OPTIMIZERS = {
    "GradientDescent": lambda: tf.compat.v1.train.GradientDescentOptimizer(0.05),
    "Momentum (Nesterov)": lambda: tf.compat.v1.train.MomentumOptimizer(
        0.05, 0.9, use_nesterov=True),
    "Adam": lambda: tf.compat.v1.train.AdamOptimizer(0.05),
    "RMSProp (momentum)": lambda: tf.compat.v1.train.RMSPropOptimizer(0.05, momentum=0.5),
    "RMSProp (centered)": lambda: tf.compat.v1.train.RMSPropOptimizer(
        0.05, momentum=0.5, centered=True),
    "Adagrad": lambda: tf.compat.v1.train.AdagradOptimizer(0.5),
}
STEPS = 20


def say(line):
    print(line, flush=True)


def train_mlp(device):
    tf.keras.utils.set_random_seed(1)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 20)).astype("float32")
    y = rng.integers(0, 10, 64).astype("int32")
    with tf.device(device):
        model = tf.keras.Sequential([tf.keras.Input((20,)),
                                     tf.keras.layers.Dense(32, activation="relu"),
                                     tf.keras.layers.Dense(10)])
        opt = tf.keras.optimizers.SGD(0.1)
        losses = []
        for _ in range(STEPS):
            with tf.GradientTape() as tape:
                logits = model(x, training=True)
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=y, logits=logits))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            losses.append(float(loss))
    return losses, [logits.device] + [g.device for g in grads]


def forward_cnn(device):
    tf.keras.utils.set_random_seed(1)
    x = np.random.default_rng(3).standard_normal((4, 28, 28, 1)).astype("float32")
    with tf.device(device):
        model = tf.keras.Sequential([
            tf.keras.Input((28, 28, 1)),
            tf.keras.layers.Conv2D(8, 3, activation="relu"),
            tf.keras.layers.MaxPooling2D(2),
            tf.keras.layers.Flatten(),
            tf.keras.layers.Dense(10, activation="softmax")])
        out = model(x)
    return out.numpy(), [out.device]


def train_v1(device):
    """{optimizer: (losses, final weights)} and where the variables and slots live."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 20)).astype("float32")
    y = (x @ rng.standard_normal((20, 1)) + 0.5).astype("float32")
    out, placed = {}, []
    for name, make in V1_OPTIMIZERS.items():
        with tf.device(device):
            w = tf.Variable(np.full((20, 1), 0.1, "float32"))
            b = tf.Variable(np.zeros((1,), "float32"))
            opt = make()
            losses = []
            for _ in range(STEPS):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
                opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
                losses.append(float(loss))
        out[name] = (losses, np.concatenate([w.numpy().ravel(), b.numpy()]))
        placed += [w.device, b.device] + [opt.get_slot(w, s).device
                                          for s in opt.get_slot_names()]
    return out, placed


def run(what, result, device):
    if what not in NEEDS:
        result["failures"].append(f"unknown model {what!r} (known: {', '.join(NEEDS)})")
        return
    missing = [op for op in NEEDS[what] if op not in result["vacc_ops"]]
    result["needs"], result["missing_kernels"] = NEEDS[what], missing
    if missing:
        say(f"{what}: not run: needs VACC kernels for {', '.join(missing)} "
            f"(of {', '.join(NEEDS[what])})")
        return
    failures = result["failures"]
    if what == "mlp":
        (got, placed), (want, _) = train_mlp(device), train_mlp("/CPU:0")
        say(f"mlp: loss on VACC {got[0]:.4f} -> {got[-1]:.4f} in {STEPS} steps; "
            f"CPU {want[0]:.4f} -> {want[-1]:.4f}")
        if not got[-1] < 0.9 * got[0]:
            failures.append(f"mlp: loss did not fall on VACC ({got[0]:.4f} -> {got[-1]:.4f})")
        if not np.allclose(got, want, rtol=1e-3, atol=1e-4):
            failures.append(f"mlp: VACC losses {got} differ from the CPU's {want}")
    elif what == "train_v1":
        (got, placed), (want, _) = train_v1(device), train_v1("/CPU:0")
        for name, (losses, weights) in got.items():
            cpu_losses, cpu_weights = want[name]
            diff = float(np.max(np.abs(weights - cpu_weights)))
            say(f"train_v1: {name}: loss on VACC {losses[0]:.4f} -> {losses[-1]:.4f} in "
                f"{STEPS} steps (CPU -> {cpu_losses[-1]:.4f}); max |VACC-CPU| weight {diff:.3g}")
            if not losses[-1] < 0.5 * losses[0]:
                failures.append(f"train_v1: {name}: loss did not fall on VACC "
                                f"({losses[0]:.4f} -> {losses[-1]:.4f})")
            if not np.allclose(weights, cpu_weights, rtol=1e-4, atol=1e-5):
                failures.append(f"train_v1: {name}: VACC weights differ from the CPU's "
                                f"(max {diff:.3g})")
    else:
        (got, placed), (want, _) = forward_cnn(device), forward_cnn("/CPU:0")
        diff = float(np.max(np.abs(got - want)))
        say(f"cnn: output {list(got.shape)}, max |VACC-CPU| {diff:.3g}")
        if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            failures.append(f"cnn: VACC output differs from the CPU's (max {diff:.3g})")
    off = [d for d in placed if not d.endswith("device:VACC:0")]
    if off:
        failures.append(f"{what}: results placed on {sorted(set(off))}, not VACC:0")
    say(f"{what}: results on {sorted(set(placed))}")
