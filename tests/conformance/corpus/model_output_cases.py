"""Cases modelled on dynamo's test_model_output: HF transformers' ModelOutput (an OrderedDict
subclass that is also a dataclass, whose None fields are left out of the dict) built inside
compiled code, passed in, read by attribute, key, index and to_tuple, written by attribute and
by key (both views must stay in step), subclassed by a user dataclass (its own __post_init__),
returned from a module; and PretrainedConfig read with hasattr/getattr defaults. The same
patterns on a ModelOutput-like class of our own, so that the cases still run where transformers
is not installed. Recast in our own words."""

import collections
import dataclasses

import torch

from . import snippets, two_vecs

SOURCE = "dynamo/test_model_output"
nn = torch.nn


class OwnOutput(collections.OrderedDict):
    """A dict whose keys are also attributes (set through either), None values left out."""

    def __init__(self, **kwargs):
        super().__init__((k, v) for k, v in kwargs.items() if v is not None)

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value

    def __getitem__(self, key):
        if isinstance(key, str):
            return super().__getitem__(key)
        return self.to_tuple()[key]

    def to_tuple(self):
        return tuple(self.values())


NS = {"torch": torch, "dataclasses": dataclasses, "OwnOutput": OwnOutput, "nn": nn}

OWN = [
    ("create_skips_none", "o = OwnOutput(last=x + 1, hidden=None, attn=x * 3)\nreturn o, list(o.keys()), len(o)"),
    ("attribute_and_key_views_agree", "o = OwnOutput(last=x)\no.hidden = x + 7\no['attn'] = x * 2\nreturn o.hidden + o['attn'], list(o), o.to_tuple()[1]"),
    ("index_and_slice", "o = OwnOutput(a=x, b=x * 2, c=None, d=x - 1)\nreturn o[0] + o[1] * 10, len(o[1:]), o[-1]"),
    ("getattr_default_missing", "o = OwnOutput(a=x)\nv = getattr(o, 'missing', None)\nreturn (x if v is None else v) + 1, hasattr(o, 'a'), 'missing' in o"),
    ("unpack_to_tuple", "o = OwnOutput(a=x, b=x.exp())\na, b = o.to_tuple()\nreturn a + b * 10"),
    ("iterate_items", "o = OwnOutput(a=x, b=x * 2)\ntotal = 0\nnames = []\nfor k, v in o.items():\n    names.append(k)\n    total = total + v\nreturn total, names"),
    ("update_and_pop", "o = OwnOutput(a=x)\no.update(b=x + 1)\np = o.pop('a')\nreturn o, p * 2"),
    ("input_read_and_written", "y = o.a * 10\nif 'b' in o:\n    y = y + o['b']\no.c = y\nreturn y", {"params": "o", "make_args": lambda n: (OwnOutput(a=torch.randn(n), b=torch.randn(n)),)}),
]
snippets(SOURCE, "model_output_own", OWN, namespace=NS)

try:
    from transformers import PretrainedConfig
    from transformers.modeling_outputs import (
        BaseModelOutput,
        BaseModelOutputWithPastAndCrossAttentions,
        BaseModelOutputWithPoolingAndCrossAttentions,
        CausalLMOutputWithPast,
    )
    from transformers.utils import ModelOutput
except ImportError:  # transformers is an optional test dependency
    ModelOutput = None

if ModelOutput is not None:

    @dataclasses.dataclass
    class FiveFields(ModelOutput):
        a: torch.Tensor = None
        b: torch.Tensor = None
        c: torch.Tensor = None
        d: torch.Tensor = None
        e: torch.Tensor = None

    @dataclasses.dataclass
    class OneField(ModelOutput):
        x: torch.Tensor = None

    class Pooler(nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = nn.Linear(4, 4)

        def forward(self, hidden):
            return torch.tanh(self.dense(hidden[:, 0]))

    class Encoder(nn.Module):
        def forward(self, hidden):
            return BaseModelOutputWithPastAndCrossAttentions(last_hidden_state=hidden, past_key_values=None,
                                                             hidden_states=None, attentions=None)

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
            self.pooler = Pooler()

        def forward(self, seq):
            enc = self.encoder(seq)
            first = enc[0]
            pooled = self.pooler(first) if self.pooler is not None else None
            result = BaseModelOutputWithPoolingAndCrossAttentions(
                last_hidden_state=first, pooler_output=pooled, past_key_values=enc.past_key_values,
                hidden_states=enc.hidden_states, attentions=enc.attentions)
            result.pooler_output = pooled * 2
            result["pooler_output"] = result.pooler_output + 1
            return result

    def bert_and_input(n):
        torch.manual_seed(0)
        return Bert(), torch.randn(2, n, 4)

    def output_in(n):
        return (BaseModelOutput(last_hidden_state=torch.randn(n), attentions=torch.randn(n)),)

    def output_with_late_keys(n):
        out = BaseModelOutput(last_hidden_state=torch.randn(n))
        out["attentions"] = torch.randn(n)
        out["hidden_states"] = torch.randn(n)
        out["extra"] = torch.randn(n)
        return (out,)

    def config_in(n):
        return torch.randn(n), PretrainedConfig(return_dict=n % 2 == 0, output_hidden_states=True)

    NS.update({"BaseModelOutput": BaseModelOutput, "CausalLMOutputWithPast": CausalLMOutputWithPast,
               "FiveFields": FiveFields, "OneField": OneField})

    HF = [
        ("create", "return BaseModelOutput(x + 1, attentions=y + 3)"),
        ("assign_attribute_and_key", "o = BaseModelOutput(last_hidden_state=y + 3)\no.hidden_states = x + 7\no['attentions'] = x + y + 6\nreturn o, o.to_tuple()"),
        ("none_field_index", "return CausalLMOutputWithPast(loss=None, logits=x + 1)[0] * y"),
        ("loss_field_returned", "return CausalLMOutputWithPast(loss=(x * y).sum(), logits=None)"),
        ("user_subclass_post_init", "return OneField(x=x * y)"),
        ("user_subclass_fields_loop", "o = FiveFields(x, y, x * y)\nfields = dataclasses.fields(o)\ntotal = getattr(o, fields[0].name)\nfor f in fields[1:]:\n    v = getattr(o, f.name)\n    if v is not None:\n        total = total + v\nreturn total, len(o), [f.name for f in fields]"),
        ("keys_set_out_of_field_order", "o = BaseModelOutput(last_hidden_state=x)\no['attentions'] = y * 2\no['hidden_states'] = x + y\nreturn o.to_tuple(), list(o), o[1], o"),
        ("none_field_set_by_attribute", "o = BaseModelOutput(last_hidden_state=x)\no.attentions = y\nreturn o.to_tuple(), len(o), o"),
        ("new_key_set_on_empty", "o = BaseModelOutput()\no['wwww'] = x\nreturn o['wwww'] + y, list(o.keys())"),
    ]
    HF += [
        ("iterate_keys_and_items", "o = BaseModelOutput(last_hidden_state=x, attentions=y)\nks = [k for k in o]\nreturn ks, [v * 2 for _, v in o.items()], list(o.values())[-1], len(o)"),
        ("dict_of_and_double_star", "o = BaseModelOutput(last_hidden_state=x, hidden_states=(x, y))\nd = dict(o)\ndef g(last_hidden_state=None, hidden_states=None, attentions=None):\n    return last_hidden_state + hidden_states[1]\nreturn d, g(**o), list(d)"),
        ("get_contains_and_missing_key", "o = CausalLMOutputWithPast(logits=x)\nr = o.get('loss', y) + o.get('logits')\ntry:\n    o['loss']\nexcept KeyError:\n    r = r + 1\nreturn r, 'loss' in o, 'logits' in o"),
        ("positional_construction", "o = BaseModelOutput(x, (x, y), None)\nreturn o.to_tuple()[1][1], list(o.keys()), o.attentions is None"),
        ("cache_name_alias", "o = CausalLMOutputWithPast(logits=x, past_key_values=(y,))\nreturn o.logits, 'cache' in o, list(o.keys())"),
        ("across_graph_break", "import torch._dynamo\no = BaseModelOutput(last_hidden_state=x)\no['attentions'] = y\ntorch._dynamo.graph_break()\no['hidden_states'] = x * y\nreturn o.to_tuple(), list(o)"),
        ("copy_and_replace", "import copy\no = BaseModelOutput(last_hidden_state=x, attentions=y)\nc = copy.copy(o)\nc['attentions'] = y * 2\nreturn o.attentions, c.attentions, c is not o, type(c).__name__"),
        ("equality_and_tuple_slice", "a = BaseModelOutput(last_hidden_state=x)\nb = BaseModelOutput(last_hidden_state=x)\nreturn a == b, a[:1][0] + 1, len(a[0:])"),
    ]
    snippets(SOURCE, "model_output_hf", HF, namespace=NS, params="x, y", make_args=two_vecs)

    HF_INPUT = [
        ("getattr_optional_fields", "x = o.last_hidden_state * 10\nif o.hidden_states is not None:\n    x += o.hidden_states\nif o.attentions is not None:\n    x += o.attentions\nreturn x"),
        ("getattr_missing_default", "if getattr(o, 'asdf', None) is not None:\n    o.asdf += 1\nreturn o.attentions + 1"),
        ("getitem_and_contains", "x = o['last_hidden_state'] * 10\nif 'hidden_states' in o:\n    x += o['hidden_states']\nif 'attentions' in o:\n    x += o['attentions']\nreturn x"),
        ("to_tuple_unpacked", "a, b = o.to_tuple()\nreturn a + b * 10"),
        ("integer_index", "return o[0] * 10 + o[1]"),
        ("written_inside", "o.attentions = o.attentions * 2\no['hidden_states'] = o[0] + 1\nreturn o.to_tuple()"),
    ]
    snippets(SOURCE, "model_output_hf_input", HF_INPUT, namespace=NS, params="o", make_args=output_in)

    snippets(SOURCE, "model_output_hf_input", [
        ("keys_in_insertion_order", "return o.to_tuple(), o[1] * 2, list(o.keys()), o['extra'] + o.extra"),
    ], namespace=NS, params="o", make_args=output_with_late_keys)

    snippets(SOURCE, "model_output_hf_config", [
        ("pretrained_config_reads", "if hasattr(c, 'somekey'):\n    x = x + 1\nif c.return_dict:\n    return x + torch.ones(1) * c.output_hidden_states\nreturn x * getattr(c, 'max_length', 3)"),
    ], namespace=NS, params="x, c", make_args=config_in)

    snippets(SOURCE, "model_output_hf_module", [
        ("bert_pooler_output", "r = m(x)\nreturn r, r.pooler_output.shape"),
    ], namespace=NS, params="m, x", make_args=bert_and_input)
