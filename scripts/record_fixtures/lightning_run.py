"""Record a PyTorch Lightning run (tiny MLP regression on synthetic data).

    python lightning_run.py --bar tqdm --scenario clean --root /tmp/pl_out
    python lightning_run.py --bar rich --scenario clean --root /tmp/pl_out
    python lightning_run.py --bar tqdm --scenario nan   --root /tmp/pl_out

clean/tqdm stops on max_steps, clean/rich stops on max_epochs.  The nan
scenario uses plain SGD with a learning rate far too large, so the loss
really overflows to inf and then nan; an EarlyStopping(check_finite=True)
callback is attached, as many projects do.
"""
import argparse

import lightning as L
import torch
from lightning.pytorch.callbacks import (
    EarlyStopping,
    ModelCheckpoint,
    RichProgressBar,
    TQDMProgressBar,
)
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def make_data(n, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 16, generator=gen)
    w = torch.linspace(-1.0, 1.0, 16)
    y = (x @ w).unsqueeze(1) + 0.1 * torch.randn(n, 1, generator=gen)
    return TensorDataset(x, y)


class TinyRegressor(L.LightningModule):
    def __init__(self, lr, optimizer):
        super().__init__()
        self.save_hyperparameters()
        self.net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("val_loss", loss, prog_bar=True)

    def configure_optimizers(self):
        if self.hparams.optimizer == "sgd":
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bar", choices=["tqdm", "rich"], default="tqdm")
    ap.add_argument("--scenario", choices=["clean", "nan"], default="clean")
    ap.add_argument("--root", required=True, help="default_root_dir / checkpoint dir")
    ap.add_argument("--nan-lr", type=float, default=0.5, help="SGD lr for the nan scenario")
    args = ap.parse_args()

    L.seed_everything(0)
    train = DataLoader(make_data(640, 1), batch_size=32, shuffle=True)
    val = DataLoader(make_data(128, 2), batch_size=64)

    callbacks = [ModelCheckpoint(dirpath=f"{args.root}/checkpoints", monitor="val_loss",
                                 save_top_k=1, verbose=True)]
    # Lightning 2.6 picks RichProgressBar on its own when `rich` is importable,
    # so the tqdm bar is requested explicitly.
    callbacks.append(RichProgressBar() if args.bar == "rich" else TQDMProgressBar())

    if args.scenario == "clean":
        model = TinyRegressor(lr=1e-2, optimizer="adam")
        limits = {"max_steps": 50} if args.bar == "tqdm" else {"max_epochs": 3}
    else:
        model = TinyRegressor(lr=args.nan_lr, optimizer="sgd")
        callbacks.append(EarlyStopping(monitor="val_loss", check_finite=True, patience=50, verbose=True))
        limits = {"max_epochs": 4}

    trainer = L.Trainer(accelerator="cpu", devices=1, default_root_dir=args.root,
                        callbacks=callbacks, log_every_n_steps=5, logger=False, **limits)
    trainer.fit(model, train, val)
    print(f"fit finished at global_step={trainer.global_step}")


if __name__ == "__main__":
    main()
