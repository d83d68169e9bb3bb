# SPDX-License-Identifier: Apache-2.0
"""One Keras MLP training step as a tf.function, on a chosen device, inside the TF venv.

Shared by the profiler check (vacc_tf_profile.py) and the benchmark
(bench/keras_step_bench.py), which puts this directory on sys.path: both
time or trace the same kind of step, so they build it the same way.
"""

import tensorflow as tf

CLASSES = 10


def train_step(device, x, y, hidden, learning_rate):
    """A function that runs one training step on `device` and returns its loss.

    The model is Dense(n, relu) for each n in `hidden`, then Dense(CLASSES)
    logits, trained with sparse softmax cross-entropy and SGD(learning_rate)
    on the batch x (float32, [batch, features]), y (int32 labels). Weights
    are seeded, so each device starts from the same model; the batch is put
    on `device` once. The first call traces the step.
    """
    tf.keras.utils.set_random_seed(1)
    with tf.device(device):
        model = tf.keras.Sequential(
            [tf.keras.Input((x.shape[1],))]
            + [tf.keras.layers.Dense(n, activation="relu") for n in hidden]
            + [tf.keras.layers.Dense(CLASSES)])
        opt = tf.keras.optimizers.SGD(learning_rate)
        xd, yd = tf.constant(x), tf.constant(y)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    def run():
        with tf.device(device):
            return float(step(xd, yd))  # float(): waits for the step
    return run
