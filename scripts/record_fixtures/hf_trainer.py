"""Record a Hugging Face Trainer run on a tiny randomly initialised GPT-2.

Nothing is downloaded: the model is built from a config and the data is
random-start counting sequences (learnable, so the loss really drops).  Usage:

    python hf_trainer.py --scenario clean --out /tmp/hf_out
    python hf_trainer.py --scenario nan   --out /tmp/hf_out

The nan scenario uses a hand-written LambdaLR that multiplies the learning rate
by 1e9 once 17 optimizer steps are done, i.e. from step 18 on (a simulated
lr-schedule bug); the NaN/inf values that follow come from real fp32 arithmetic.
"""
import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch
from torch.utils.data import Dataset
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments


class CountingTokens(Dataset):
    """Random-start counting sequences (start, start+k, start+2k, ... mod vocab).

    Learnable, so the loss really goes down; labels equal the inputs (causal LM).
    """

    def __init__(self, n_rows, seq_len, vocab, seed):
        gen = torch.Generator().manual_seed(seed)
        start = torch.randint(0, vocab, (n_rows, 1), generator=gen)
        stride = torch.randint(1, 4, (n_rows, 1), generator=gen)
        self.rows = (start + stride * torch.arange(seq_len)) % vocab

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        ids = self.rows[i]
        return {"input_ids": ids, "labels": ids.clone()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", choices=["clean", "nan"], default="clean")
    ap.add_argument("--out", required=True, help="output_dir for checkpoints")
    ap.add_argument("--max-steps", type=int, default=40)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--warmup-steps", type=int, default=None)
    ap.add_argument("--lr-jump-step", type=int, default=None,
                    help="after this many optimizer steps, multiply the lr by --lr-jump-factor")
    ap.add_argument("--lr-jump-factor", type=float, default=1e9)
    args = ap.parse_args()

    torch.manual_seed(0)
    vocab = 128
    cfg = GPT2Config(n_layer=1, n_head=2, n_embd=32, vocab_size=vocab, n_positions=64)
    model = GPT2LMHeadModel(cfg)

    train_ds = CountingTokens(512, 32, vocab, seed=1)
    eval_ds = CountingTokens(64, 32, vocab, seed=2)

    lr = args.lr if args.lr is not None else 3e-3
    warmup = args.warmup_steps if args.warmup_steps is not None else 0
    if args.scenario == "nan" and args.lr_jump_step is None:
        # healthy for 17 optimizer steps, then the lr is multiplied by 1e9
        args.lr_jump_step = 17

    targs = TrainingArguments(
        output_dir=args.out,
        max_steps=args.max_steps,
        per_device_train_batch_size=8,
        per_device_eval_batch_size=16,
        learning_rate=lr,
        warmup_steps=warmup,
        logging_steps=5,
        eval_strategy="steps",
        eval_steps=10,
        save_strategy="steps",
        save_steps=20,
        report_to="none",
        use_cpu=True,
        seed=0,
        dataloader_num_workers=0,
    )
    optimizers = (None, None)
    if args.lr_jump_step is not None:
        # A hand-written schedule with a bad multiplier: healthy lr first, then
        # an absurd one.  The NaN that follows comes from real arithmetic.
        opt = torch.optim.AdamW(model.parameters(), lr=lr)
        jump, factor = args.lr_jump_step, args.lr_jump_factor
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 1.0 if s < jump else factor)
        optimizers = (opt, sched)
    trainer = Trainer(model=model, args=targs, train_dataset=train_ds, eval_dataset=eval_ds,
                      optimizers=optimizers)
    result = trainer.train()
    print(f"Training complete: global_step={result.global_step} training_loss={result.training_loss}")


if __name__ == "__main__":
    main()
