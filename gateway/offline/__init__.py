"""The offline wing: training, evaluation, encoder distillation, policy replay and capacity
planning. Serving code never imports it; its heavy dependencies are the `train` extra."""
