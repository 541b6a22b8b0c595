"""GPU study: step time, Cached-loss memory and one-epoch training on one borrowed GPU."""
