"""Module state while training, in the style of dynamo's test_misc and test_repros (their
nn.Module, parameter, buffer, grad-mode and autocast tests, recast in our own words): buffers
written in forward (BatchNorm with a cumulative average, spectral norm's power iteration, an
Embedding renormalizing its rows, a running EMA under no_grad), weights tied between two
modules, parameters written in place or through `.data` inside the compiled call
(vector_to_parameters, load_state_dict, zero_grad, requires_grad_), a parameter's `.grad` read
in forward (set or not between calls), grad mode and autocast around and inside forward (a
no_grad method, enable_grad inside no_grad, set_grad_enabled from an argument, autocast to
bfloat16 on CPU), train()/eval() inside, functional_call with swapped weights, modules made or
deep-copied inside, and RNN/attention modules read in training and evaluation mode."""

import copy

import torch
import torch.nn.functional as F

from .upstream4_support import graph_break, pick, register

nn = torch.nn
W = 6
case = register("dynamo/test_misc", "training4")


def mod_and_input(make_module, grad=True, rows=None):
    def build(n):
        return make_module(), torch.randn(rows or n, W, requires_grad=grad)

    return build


def call(m, x):
    return m(x)


# ---- buffers written by forward --------------------------------------------------------------


def batchnorm_cumulative():
    return nn.Sequential(nn.Linear(W, W), nn.BatchNorm1d(W, momentum=None))


def batchnorm_mode():
    m = nn.Sequential(nn.Linear(W, W), nn.BatchNorm1d(W, momentum=pick(0.1, 0.5), affine=pick(True, False)))
    m.train(pick(True, False))
    return m


def batchnorm_no_stats():
    return nn.Sequential(nn.Linear(W, W), nn.BatchNorm1d(W, track_running_stats=False))


case("batchnorm_cumulative_average", mod_and_input(batchnorm_cumulative), lambda m, x: (m(x), m(x * 2)), train=True)
case("batchnorm_momentum_and_mode_per_call", mod_and_input(batchnorm_mode), call, train=True)
case("batchnorm_without_running_stats", mod_and_input(batchnorm_no_stats), call, train=True)


def instancenorm(n):
    m = nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
    m.train(pick(True, False))
    return m, torch.randn(2, 3, n + 2, requires_grad=True)


case("instancenorm_tracking_stats", instancenorm, call, train=True)


def spectral(n):
    m = nn.utils.spectral_norm(nn.Linear(W, W))
    m.train(pick(True, False))
    return m, torch.randn(n, W, requires_grad=True)


case("spectral_norm_power_iteration", spectral, lambda m, x: (m(x), m(x + 1)), train=True)


def parametrized_spectral(n):
    m = nn.utils.parametrizations.spectral_norm(nn.Linear(W, W))
    return m, torch.randn(n, W, requires_grad=True)


case("parametrized_spectral_norm", parametrized_spectral, call, train=True)


def embedding_max_norm(n):
    m = nn.Embedding(10, W, max_norm=pick(1.0, 0.5))
    return m, torch.randint(0, 10, (n,))


case("embedding_max_norm_renormalizes_rows", embedding_max_norm, lambda m, idx: (m(idx), m.weight.norm(dim=1)),
     train=True)


def embedding_padding(n):
    return nn.Embedding(10, W, padding_idx=pick(0, 3)), torch.randint(0, 10, (n,))


case("embedding_padding_idx_grads", embedding_padding, lambda m, idx: m(idx) * 2, train=True)


class RunningMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)
        self.register_buffer("mean", torch.zeros(W))
        self.register_buffer("steps", torch.tensor(0))
        self.decay = pick(0.9, 0.5)

    def forward(self, x):
        y = self.lin(x)
        if self.training:
            with torch.no_grad():
                self.mean.mul_(self.decay).add_(y.mean(0), alpha=1 - self.decay)
                self.steps += 1
        return y - self.mean


case("running_mean_buffer_under_no_grad", mod_and_input(RunningMean), lambda m, x: (m(x), m(x), m.steps.item()),
     train=True)


# ---- tied and shared parameters ---------------------------------------------------------------


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, W)
        self.head = nn.Linear(W, 10, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, idx):
        return self.head(torch.tanh(self.embed(idx)))


case("weights_tied_embedding_and_head", lambda n: (Tied(), torch.randint(0, 10, (n,))), call, train=True)
case("weights_tied_parameter_count", lambda n: (Tied(), torch.randint(0, 10, (n,))),
     lambda m, idx: (m(idx), len(list(m.parameters())), len(list(m.named_parameters(remove_duplicate=False)))),
     train=True)


class SharedWeightTwice(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(W, W))

    def forward(self, x):
        return F.linear(F.linear(x, self.w), self.w.t())


case("one_parameter_used_twice_and_transposed", mod_and_input(SharedWeightTwice), call, train=True)


# ---- parameters written inside the compiled call --------------------------------------------------


def write_through_data(m, x):
    out = m(x)
    m.weight.data = m.weight.data * 0.5
    return out, m(x)


case("parameter_data_rebound_inside", mod_and_input(lambda: nn.Linear(W, W)), write_through_data, train=True)


def inplace_under_no_grad(m, x):
    with torch.no_grad():
        m.weight[0].fill_(0.0)
        m.bias.clamp_(-0.1, 0.1)
    return m(x)


case("parameter_written_in_place_under_no_grad", mod_and_input(lambda: nn.Linear(W, W)), inplace_under_no_grad,
     train=True)


def vector_roundtrip(m, x):
    vec = nn.utils.parameters_to_vector(m.parameters())
    nn.utils.vector_to_parameters(vec * 2, m.parameters())
    return vec, m(x)


case("vector_to_parameters_inside", mod_and_input(lambda: nn.Linear(W, 3)), vector_roundtrip, train=True)


def load_other(n):
    m = nn.Linear(W, 3)
    other = nn.Linear(W, 3)
    return m, other.state_dict(), torch.randn(n, W, requires_grad=True)


case("load_state_dict_inside", load_other, lambda m, sd, x: (m.load_state_dict(sd) is not None, m(x)), train=True)


def grads_prefilled(n):
    m = nn.Linear(W, W)
    if pick(True, False):
        for p in m.parameters():
            p.grad = torch.randn_like(p)
    return m, torch.randn(n, W, requires_grad=True)


case("zero_grad_inside_with_grads_or_not", grads_prefilled, lambda m, x: (m.zero_grad(), m(x))[1], train=True)
case("zero_grad_keeping_tensors", grads_prefilled, lambda m, x: (m.zero_grad(set_to_none=False), m(x))[1],
     train=True)


class ReadsGrad(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)

    def forward(self, x):
        if self.lin.weight.grad is not None:
            return self.lin(x) - self.lin.weight.grad.sum()
        return self.lin(x)


def reads_grad(n):
    m, x = ReadsGrad(), torch.randn(n, W, requires_grad=True)
    if pick(True, False):
        m.lin.weight.grad = torch.randn(W, W)
    return m, x


case("forward_reads_parameter_grad", reads_grad, call, train=True)


def freeze_inside(m, x):
    m[0].requires_grad_(False)
    out = m(x)
    return out, [p.requires_grad for p in m.parameters()]


case("requires_grad_off_inside", mod_and_input(lambda: nn.Sequential(nn.Linear(W, W), nn.Tanh(), nn.Linear(W, 2))),
     freeze_inside, train=True)


def freeze_between(n):
    m = nn.Sequential(nn.Linear(W, W), nn.Tanh(), nn.Linear(W, 2))
    m[pick(0, 2)].weight.requires_grad_(False)
    return m, torch.randn(n, W, requires_grad=pick(True, False))


case("requires_grad_off_between_calls", freeze_between, call, train=True)


def init_inside(m, x):
    def init(sub):
        if isinstance(sub, nn.Linear):
            nn.init.constant_(sub.weight, 0.1)
            nn.init.zeros_(sub.bias)

    m.apply(init)
    return m(x)


case("apply_init_inside", mod_and_input(lambda: nn.Sequential(nn.Linear(W, W), nn.ReLU(), nn.Linear(W, 2))),
     init_inside, train=True)


# ---- grad mode and autocast around and inside forward -----------------------------------------


class NoGradMethod(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)

    @torch.no_grad()
    def stats(self, x):
        return self.lin(x).mean()

    def forward(self, x):
        return self.lin(x) * self.stats(x)


case("no_grad_decorated_method", mod_and_input(NoGradMethod), call, train=True)


class EnableGradInside(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)

    def forward(self, x):
        with torch.enable_grad():
            y = self.lin(x)
        return y, y.requires_grad, torch.is_grad_enabled()


def no_grad_caller(m, x):
    with torch.no_grad():
        out = m(x)
    return out


case("enable_grad_inside_a_no_grad_caller", mod_and_input(EnableGradInside), no_grad_caller, train=True)


def grad_flag(n):
    return nn.Linear(W, W), torch.randn(n, W, requires_grad=True), pick(True, False)


def set_grad_from_arg(m, x, flag):
    with torch.set_grad_enabled(flag):
        y = m(x)
    return y, y.requires_grad


case("set_grad_enabled_from_argument", grad_flag, set_grad_from_arg, train=True)


class AutocastInside(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.lin(x)
            z = y.float().softmax(-1)
        return y, z, y.dtype


case("autocast_bfloat16_inside_forward", mod_and_input(AutocastInside), call, train=True, atol=1e-2, rtol=1e-2)


def autocast_flag(n):
    return nn.Linear(W, W), torch.randn(n, W, requires_grad=True), pick(True, False)


def autocast_from_arg(m, x, on):
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=on):
        y = m(x)
    return y, y.dtype


case("autocast_enabled_from_argument", autocast_flag, autocast_from_arg, train=True, atol=1e-2, rtol=1e-2)


def autocast_then_disabled(m, x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = m(x)
        with torch.autocast("cpu", enabled=False):
            b = m(x.float())
    return a.dtype, b.dtype, b


case("autocast_disabled_inside_autocast", mod_and_input(lambda: nn.Linear(W, W)), autocast_then_disabled, train=True)


def eval_inside(m, x):
    m.eval()
    a = m(x)
    m.train()
    return a, m(x), m.training


case("eval_then_train_inside", mod_and_input(lambda: nn.Sequential(nn.Linear(W, W), nn.BatchNorm1d(W), nn.Dropout(0.0))),
     eval_inside, train=True)


def chained_eval(m, x):
    return m.eval()(x), m.train(False).training


case("eval_returns_self_chained", mod_and_input(lambda: nn.Sequential(nn.Linear(W, W), nn.BatchNorm1d(W))),
     chained_eval, train=True)


def inference_mode_inside(m, x):
    with torch.inference_mode():
        y = m(x)
    return y * 2, y.is_inference()


case("inference_mode_inside", mod_and_input(lambda: nn.Linear(W, W)), inference_mode_inside)


# ---- functional_call, modules made or copied inside ------------------------------------------------


def functional_swap(n):
    m = nn.Linear(W, 3)
    params = {"weight": torch.randn(3, W, requires_grad=True), "bias": torch.randn(3)}
    return m, params, torch.randn(n, W)


case("functional_call_with_other_weights", functional_swap,
     lambda m, params, x: (torch.func.functional_call(m, params, (x,)), m(x)), train=True)


def deepcopy_inside(m, x):
    twin = copy.deepcopy(m)
    with torch.no_grad():
        twin.weight.mul_(2)
    return m(x), twin(x)


case("module_deepcopied_inside", mod_and_input(lambda: nn.Linear(W, W)), deepcopy_inside, train=True)


def built_inside(x):
    torch.manual_seed(1)
    m = nn.Sequential(nn.Linear(W, 4), nn.GELU(), nn.LayerNorm(4))
    return m(x), sum(p.numel() for p in m.parameters())


case("module_built_inside_seeded", lambda n: (torch.randn(n, W, requires_grad=True),), built_inside, train=True)


def sub_added_inside(m, x):
    m.add_module("extra", nn.Identity())
    out = m(x)
    del m.extra
    return out, [name for name, _ in m.named_children()]


case("submodule_added_and_deleted_inside", mod_and_input(lambda: nn.Sequential(nn.Linear(W, W), nn.ReLU())),
     sub_added_inside, train=True)


# ---- RNN and attention modules ----------------------------------------------------------------------


def rnn(kind):
    def build(n):
        cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
        m = cls(W, 4, num_layers=2, batch_first=True, bidirectional=pick(True, False))
        return m, torch.randn(2, n, W, requires_grad=True)

    return build


for kind in ("lstm", "gru", "rnn"):
    case(f"{kind}_two_layers", rnn(kind), call, train=True, atol=1e-4)


def lstm_cell_loop(n):
    return nn.LSTMCell(W, 3), torch.randn(n, 2, W, requires_grad=True)


def run_cell(cell, xs):
    h = c = torch.zeros(2, 3)
    outs = []
    for t in range(xs.shape[0]):
        h, c = cell(xs[t], (h, c))
        outs.append(h)
    return torch.stack(outs)


case("lstm_cell_unrolled_over_size", lstm_cell_loop, run_cell, train=True, atol=1e-4)


def mha(n):
    m = nn.MultiheadAttention(W, 2, batch_first=True)
    m.train(pick(True, False))
    mask = torch.zeros(2, n, dtype=torch.bool)
    mask[:, -1] = pick(True, False)
    return m, torch.randn(2, n, W, requires_grad=True), mask, pick(True, False)


def mha_call(m, x, mask, need_weights):
    out, weights = m(x, x, x, key_padding_mask=mask, need_weights=need_weights)
    return out, weights


case("multihead_attention_padding_mask", mha, mha_call, train=True, atol=1e-4)


def encoder_layer(n):
    m = nn.TransformerEncoderLayer(W, 2, dim_feedforward=8, dropout=0.0, batch_first=True)
    m.train(pick(True, False))
    return m, torch.randn(2, n, W)


def encoder_no_grad(m, x):
    with torch.no_grad():
        return m(x)


case("transformer_encoder_layer_train_or_eval", encoder_layer, call, train=True, atol=1e-4)
case("transformer_encoder_layer_no_grad_fast_path", encoder_layer, encoder_no_grad, atol=1e-4)


def dropout_eval(n):
    m = nn.Sequential(nn.Linear(W, W), nn.Dropout(0.5), nn.AlphaDropout(0.3))
    m.eval()
    return m, torch.randn(n, W, requires_grad=True)


case("dropouts_in_eval_are_identity", dropout_eval, call, train=True)


class FunctionalDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(W, W)
        self.p = pick(0.0, 1.0)
        self.train(pick(True, False))

    def forward(self, x):
        return F.dropout(self.lin(x), p=self.p, training=self.training)


case("functional_dropout_follows_training", mod_and_input(FunctionalDropout), call, train=True)


def break_between_layers(m, x):
    h = m[0](x)
    graph_break()
    return m[1](h), m[2](m[1](h))


case("layers_called_across_a_break", mod_and_input(lambda: nn.Sequential(nn.Linear(W, W), nn.BatchNorm1d(W), nn.GELU())),
     break_between_layers, train=True)
