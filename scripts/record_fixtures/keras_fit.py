"""Keras 3 `model.fit` on the torch backend (synthetic 3-class data).

    KERAS_BACKEND=torch python keras_fit.py --verbose 1
    KERAS_BACKEND=torch python keras_fit.py --verbose 2
"""
import argparse
import os

os.environ.setdefault("KERAS_BACKEND", "torch")

import keras
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--verbose", type=int, choices=[1, 2], default=1)
    ap.add_argument("--epochs", type=int, default=3)
    args = ap.parse_args()

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    centers = rng.normal(0.0, 0.6, size=(3, 20)).astype("float32")
    y = rng.integers(0, 3, size=2400)
    x = (centers[y] + rng.normal(0.0, 1.0, size=(2400, 20))).astype("float32")
    x_train, y_train, x_val, y_val = x[:2000], y[:2000], x[2000:], y[2000:]

    model = keras.Sequential([
        keras.Input(shape=(20,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(3, activation="softmax"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, validation_data=(x_val, y_val), epochs=args.epochs,
              batch_size=32, verbose=args.verbose)
    model.save("keras_model.keras")
    print("saved keras_model.keras")


if __name__ == "__main__":
    main()
