"""Tests for accelsim.mapping.maestro_format (MAESTRO .m reader/writer)."""

from __future__ import annotations

import dataclasses

import pytest

from accelsim.errors import InputError, MappingError
from accelsim.mapping.ast import ClusterDirective, MaestroFile, MaestroLayer, MapDirective
from accelsim.mapping.maestro_format import (
    CANONICAL_TYPES,
    dims_for_type,
    layer_from_maestro,
    load_maestro,
    op_type,
    parse_maestro,
    strip_lines,
    write_maestro,
)
from accelsim.mapping.maestro_resolve import maestro_meaning
from accelsim.workload.ops import OpType

P = "net.m"


def S(size, offset, dim, line=0):
    return MapDirective("spatial", size, offset, dim, line)


def T(size, offset, dim, line=0):
    return MapDirective("temporal", size, offset, dim, line)


def C(size, line=0):
    return ClusterDirective(size, line)


REALISTIC = """\
// NVDLA-like weight-stationary (KCP) and Eyeriss-like row-stationary mappings
Constant KTile 64;

Network ResNet50 {
\tLayer CONV1 {
\t\tType: CONV
\t\tStride { X: 2, Y: 2 }
\t\tDimensions { K: 64, C: 3, R: 7, S: 7, Y: 230, X: 230 }
\t\tDataflow {
\t\t\tSpatialMap(1,1) K;
\t\t\tTemporalMap(64,64) C;
\t\t\tTemporalMap(Sz(R),Sz(R)) R;
\t\t\tTemporalMap(Sz(S),Sz(S)) S;
\t\t\tTemporalMap(Sz(R),1) Y;
\t\t\tTemporalMap(Sz(S),1) X;
\t\t\tCluster(KTile, P);
\t\t\tSpatialMap(1,1) C;
\t\t\tTemporalMap(Sz(R),1) Y;
\t\t\tTemporalMap(Sz(S),1) X;
\t\t\tTemporalMap(Sz(R),Sz(R)) R;
\t\t\tTemporalMap(Sz(S),Sz(S)) S;
\t\t}
\t}

\tLayer CONV2_1_2 {
\t\tType: CONV
\t\tStride { X: 1, Y: 1 }
\t\tDimensions { N: 1, K: 64, C: 64, R: 3, S: 3, Y: 58, X: 58 }
\t\tDataflow {
\t\t\tSpatialMap(1,1) Y';
\t\t\tTemporalMap(1,1) X';
\t\t\tTemporalMap(1,1) C;
\t\t\tTemporalMap(16,16) K;
\t\t\tTemporalMap(Sz(R),Sz(R)) R;
\t\t\tTemporalMap(Sz(S),Sz(S)) S;
\t\t\tCluster(Sz(R),P);
\t\t\tSpatialMap(1,1) Y;
\t\t\tSpatialMap(1,1) R;
\t\t\tTemporalMap(Sz(S),Sz(S)) S;
\t\t}
\t}

\tLayer DW2 {
\t\tType: DSCONV
\t\tStride { X: 2, Y: 2 }
\t\tDimensions { K: 1, C: 96, R: 3, S: 3, Y:113, X:113 }
\t\tDataflow {
\t\t\tTemporalMap (Sz(R), 1) Y;
\t\t\tTemporalMap (Sz(S), 1) X;
\t\t\tTemporalMap (Sz(R), Sz(R)) R;
\t\t\tTemporalMap (Sz(S), Sz(S)) S;
\t\t\tSpatialMap (1,1) C;
\t\t}
\t}

\tLayer FC1000 {
\t\tType: GEMM
\t\tDimensions { M: 1, N: 1000, K: 2048 }
\t\tDataflow {
\t\t\tTemporalMap(1,1) M;
\t\t\tSpatialMap(1,1) N;
\t\t\tTemporalMap(64,64) K;
\t\t}
\t}
}
"""


# ----- realistic files -------------------------------------------------------------------------


def test_realistic_multilayer_file():
    mf = parse_maestro(REALISTIC, P)
    assert mf.network == "ResNet50"
    assert mf.path == P
    assert [la.name for la in mf.layers] == ["CONV1", "CONV2_1_2", "DW2", "FC1000"]
    assert [la.line for la in mf.layers] == [5, 25, 43, 56]

    kcp = mf.layers[0]
    assert kcp.type == "CONV" and (kcp.stride_y, kcp.stride_x) == (2, 2)
    assert kcp.dims == {"K": 64, "C": 3, "R": 7, "S": 7, "Y": 230, "X": 230}
    # MAESTRO's meaning: C's 64-wide map covers the 3 channels; at stride 2 a 7-row window over
    # a 7-row filter is one output row, advancing 2 input rows (the file's text is kept too)
    assert kcp.dataflow == (
        S(1, 1, "K", 10), T(3, 64, "C", 11), T(7, 7, "R", 12), T(7, 7, "S", 13),
        T(7, 2, "Y", 14), T(7, 2, "X", 15), C(64, 16), S(1, 1, "C", 17),
        T(7, 2, "Y", 18), T(7, 2, "X", 19), T(7, 7, "R", 20), T(7, 7, "S", 21),
    )
    assert kcp.written_dataflow == (
        S(1, 1, "K", 10), T(64, 64, "C", 11), T(7, 7, "R", 12), T(7, 7, "S", 13),
        T(7, 1, "Y", 14), T(7, 1, "X", 15), C(64, 16), S(1, 1, "C", 17),
        T(7, 1, "Y", 18), T(7, 1, "X", 19), T(7, 7, "R", 20), T(7, 7, "S", 21),
    )

    rs = mf.layers[1]
    assert rs.dims["N"] == 1 and (rs.stride_y, rs.stride_x) == (1, 1)
    assert [d for d in rs.dataflow] == [
        S(1, 1, "Y'", 30), T(1, 1, "X'", 31), T(1, 1, "C", 32), T(16, 16, "K", 33),
        T(3, 3, "R", 34), T(3, 3, "S", 35), C(3, 36), S(1, 1, "Y", 37), S(1, 1, "R", 38),
        T(3, 3, "S", 39),
    ]
    inner = rs.dataflow[7:]
    assert sum(isinstance(d, MapDirective) and d.kind == "spatial" for d in inner) == 2

    dw = mf.layers[2]
    assert dw.type == "DSCONV" and op_type(dw) is OpType.DWCONV
    assert dw.dims["K"] == 1

    gemm = mf.layers[3]
    assert gemm.type == "GEMM" and gemm.dims == {"M": 1, "N": 1000, "K": 2048}
    assert op_type(gemm) is OpType.GEMM


def test_layers_build():
    mf = parse_maestro(REALISTIC, P)
    conv1 = layer_from_maestro(mf.layers[0], P)
    assert conv1.op is OpType.CONV2D and conv1.sizes["N"] == 1
    assert (conv1.out_y, conv1.out_x) == (112, 112)
    assert conv1.source == f"{P}:5"
    dw = layer_from_maestro(mf.layers[2], P)
    assert dw.op is OpType.DWCONV and dw.sizes["K"] == 1 and dw.out_y == 56
    gemm = layer_from_maestro(mf.layers[3], P)
    assert gemm.op is OpType.GEMM and gemm.macs == 1000 * 2048


def test_layer_from_maestro_output_dims_and_validation():
    mf = parse_maestro(
        "Network n { Layer a { Type: CONV Stride { X: 2, Y: 1 }\n"
        "Dimensions { K: 8, C: 4, R: 3, S: 3, Y': 18, X': 13 }\n"
        "Dataflow { SpatialMap(1,1) Y'; TemporalMap(1,1) X; } } }",
        P,
    )
    layer = layer_from_maestro(mf.layers[0], P)
    assert layer.sizes["Y"] == 20 and layer.sizes["X"] == 27
    assert (layer.out_y, layer.out_x) == (18, 13)

    bad = parse_maestro(
        "Network n {\nLayer a {\nType: DSCONV\nDimensions { K: 5, C: 4, R: 3, S: 3, Y: 8, X: 8 }\n"
        "Dataflow { SpatialMap(1,1) C; } } }",
        P,
    )
    with pytest.raises(InputError) as ei:
        layer_from_maestro(bad.layers[0], P)
    assert f"{P}:2" in str(ei.value) and "depthwise" in str(ei.value)


# ----- lexical forms ---------------------------------------------------------------------------


def test_crlf_cr_and_bom_equal_lf():
    lf = parse_maestro(REALISTIC, P)
    assert parse_maestro(REALISTIC.replace("\n", "\r\n"), P) == lf
    assert parse_maestro(REALISTIC.replace("\n", "\r"), P) == lf
    assert parse_maestro("\ufeff" + REALISTIC.replace("\n", "\r\n"), P) == lf


def test_comments_keep_line_numbers():
    text = (
        "# hash comment\n"
        "/* block\n"
        "   comment over lines { } */ Network n { // trailing\n"
        "  Layer a { /* inline */ Type: CONV # why not\n"
        "    Dimensions { K: 4, /* c */ C: 2, R: 1, S: 1, Y: 4, X: 4 }\n"
        "    Dataflow {\n"
        "      // SpatialMap(1,1) C;\n"
        "      /* TemporalMap(1,1) C; */ SpatialMap(1,1) K; /// triple slash\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
    mf = parse_maestro(text, P)
    assert mf.layers[0].line == 4
    assert mf.layers[0].dataflow == (S(1, 1, "K", 8),)


def test_loose_forms():
    text = """
    network n {
      layer L-1.a {
        type conv
        stride { x 2 y 3 }
        DIMENSIONS { k 64 c 3; r 3 s 3 y 9 x 9 n 2 }
        dataflow {
          spatialmap (1 , 1) k
          temporalmap(sz(r), 1) y' temporalMap(2,2) c;;
          cluster(4,p)
          SpatialMap(1,1) Y\u2019
        }
      };
    }
    """
    layer = parse_maestro(text, P).layers[0]
    assert layer.name == "L-1.a" and layer.type == "CONV"
    assert (layer.stride_y, layer.stride_x) == (3, 2)
    assert layer.dims == {"K": 64, "C": 3, "R": 3, "S": 3, "Y": 9, "X": 9, "N": 2}
    assert strip_lines(MaestroFile("n", (layer,), P)).layers[0].dataflow == (
        S(1, 1, "K"), T(3, 1, "Y'"), T(2, 2, "C"), C(4), S(1, 1, "Y'"),
    )


def test_dimensions_forms_from_real_files():
    # "K 64" form, missing commas (as in MAESTRO's MobileNetV2 files), Type without ':'
    a = parse_maestro(
        "Network n { Layer a { Type CONV Dimensions { K 64 C 3 R 1 S 1 Y 8 X 8 } "
        "Dataflow { SpatialMap(1,1) K } } }", P
    )
    b = parse_maestro(
        "Network n { Layer a { Type: CONV\nDimensions { K: 64, C: 3 R: 1, S: 1, Y:8, X:8 }\n"
        "Dataflow { SpatialMap(1,1) K; } } }", P
    )
    assert strip_lines(a) == strip_lines(b)
    assert a.layers[0].dims == {"K": 64, "C": 3, "R": 1, "S": 1, "Y": 8, "X": 8}


def test_semicolons_optional():
    with_semi = parse_maestro(REALISTIC, P)
    without = parse_maestro(REALISTIC.replace(";", ""), P)
    assert without == with_semi


def test_network_name_optional():
    mf = parse_maestro("Network { Layer a { Type: FC Dimensions { K: 4, C: 4 } Dataflow { SpatialMap(1,1) K; } } }")
    assert mf.network == "" and mf.path == "<string>"
    assert strip_lines(parse_maestro(write_maestro(mf))) == strip_lines(mf)


@pytest.mark.parametrize(
    "written, canonical, op",
    [
        ("CONV", "CONV", OpType.CONV2D),
        ("conv2d", "CONV", OpType.CONV2D),
        ("DSCONV", "DSCONV", OpType.DWCONV),
        ("DwConv", "DSCONV", OpType.DWCONV),
        ("PWCONV", "PWCONV", OpType.PWCONV),
        ("FC", "FC", OpType.FC),
        ("RESADD", "RESADD", OpType.RESADD),
        ("Residual", "RESADD", OpType.RESADD),
        ("RESIDUAL_IDENTITY", "RESADD", OpType.RESADD),
        ("add", "RESADD", OpType.RESADD),
    ],
)
def test_types_and_aliases(written, canonical, op):
    mf = parse_maestro(
        f"Network n {{ Layer a {{ Type: {written} Dimensions {{ C: 8, Y: 4, X: 4 }} "
        "Dataflow { SpatialMap(1,1) C; } } }", P
    )
    assert mf.layers[0].type == canonical
    assert op_type(mf.layers[0]) is op


def test_gemm_type_and_dims():
    mf = parse_maestro(
        "Network n { Layer g { Type: gemm Dimensions { N: 20, K: 30, M: 10 } "
        "Dataflow { TemporalMap(4,4) N; SpatialMap(1,1) M; TemporalMap(30,30) K; Cluster(30,P); SpatialMap(1,1) K; } } }",
        P,
    )
    g = mf.layers[0]
    assert g.type == "GEMM" and g.dims == {"N": 20, "K": 30, "M": 10}
    assert layer_from_maestro(g, P).sizes == {"M": 10, "N": 20, "K": 30}
    assert dims_for_type("GEMM") == ("M", "N", "K")


# ----- sizes -----------------------------------------------------------------------------------


def test_constants_and_sz():
    text = """
    Constant T 16;
    Constant Two 2
    Constant Big T * Two + 1;
    Network n {
      Layer a {
        Type: CONV
        Dimensions { K: T, C: Big, R: 3, S: Two, Y: 10, X: 10 }
        Dataflow {
          TemporalMap(Sz(R),1) Y;
          TemporalMap(Sz(S),Sz(S)) S;
          SpatialMap(Big,T) C;
          TemporalMap(Sz(N),Sz(N)) N;
        }
      }
    }
    """
    layer = parse_maestro(text, P).layers[0]
    assert layer.dims == {"K": 16, "C": 33, "R": 3, "S": 2, "Y": 10, "X": 10}
    assert [(d.size, d.offset) for d in layer.dataflow] == [(3, 1), (2, 2), (33, 16), (1, 1)]


def test_expressions():
    text = """
    Constant T 4;
    Network n { Layer a { Type: CONV
      Dimensions { K: 2*(T+1), C: 3, R: 3, S: 3, Y: 10 - 1, X: -(-10) }
      Dataflow {
        TemporalMap(Sz(R) * 2 - 1, Sz(R)-2) Y;
        TemporalMap((T + 1) * (Sz(S)), 1 + +1) X;
        Cluster(T*T - 1, P);
        SpatialMap(Sz(K)/*c*/-Sz(C)*2, 1) K;
      } } }
    """
    layer = parse_maestro(text, P).layers[0]
    assert layer.dims["K"] == 10 and layer.dims["Y"] == 9 and layer.dims["X"] == 10
    assert strip_lines(MaestroFile("n", (layer,), P)).layers[0].dataflow == (
        T(5, 1, "Y"), T(10, 2, "X"), C(15), S(4, 1, "K"),
    )


def test_multi_level_clusters():
    text = """
    Network n { Layer a { Type: CONV
      Dimensions { K: 64, C: 64, R: 3, S: 3, Y: 34, X: 34 }
      Dataflow {
        SpatialMap(1,1) K;
        TemporalMap(16,16) C;
        Cluster(16, P);
        SpatialMap(1,1) C;
        TemporalMap(Sz(R),1) Y;
        Cluster(Sz(R), P);
        SpatialMap(1,1) Y;
        SpatialMap(1,1) R;
      } } }
    """
    df = parse_maestro(text, P).layers[0].dataflow
    assert [d.size for d in df if isinstance(d, ClusterDirective)] == [16, 3]
    assert [d.line for d in df if isinstance(d, ClusterDirective)] == [7, 10]


def test_no_size_legality_checks_here():
    # larger than the dimension: accepted (the compiler checks legality against hardware)
    mf = parse_maestro(
        "Network n { Layer a { Type: CONV Dimensions { K: 4, C: 4, R: 1, S: 1, Y: 4, X: 4 } "
        "Dataflow { SpatialMap(100,100) K; Cluster(100000, P); SpatialMap(1,1) C; } } }", P
    )
    assert mf.layers[0].dataflow[0].size == 4  # MAESTRO's meaning: the map covers K
    assert mf.layers[0].written_dataflow[0].size == 100


# ----- writer ----------------------------------------------------------------------------------


def test_round_trip_realistic():
    mf = parse_maestro(REALISTIC, P)
    text = write_maestro(mf)
    back = parse_maestro(text, P)
    assert strip_lines(back) == strip_lines(mf)
    assert "Y';" in text and "Sz(" not in text
    assert write_maestro(back) == text


def test_writer_rejects_unwritable():
    layer = MaestroLayer("bad name", "CONV", 1, 1, {"K": 1}, (S(1, 1, "K"),), 3)
    with pytest.raises(MappingError) as ei:
        write_maestro(MaestroFile("n", (layer,), "out.m"))
    assert "out.m:3:" in str(ei.value) and "layer name" in str(ei.value)
    layer = MaestroLayer("a", "CONV", 1, 1, {"K": 0}, (S(1, 1, "K"),), 3)
    with pytest.raises(MappingError, match="dimension K must be an integer from 1 to 999999999999999999"):
        write_maestro(MaestroFile("n", (layer,), "out.m"))


try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    given = None

if given is not None:
    _names = st.from_regex(r"[A-Za-z0-9_.\-]{1,12}", fullmatch=True)

    @st.composite
    def _layers(draw, name):
        tname = draw(st.sampled_from(sorted(CANONICAL_TYPES)))
        allowed = list(dims_for_type(tname))
        windowed = "Y'" in allowed  # the convolution types; GEMM and BMM have no windows
        if windowed:
            # at most one of Y / Y' and of X / X'
            for a, b in (("Y", "Y'"), ("X", "X'")):
                allowed.remove(draw(st.sampled_from([a, b])))
        keys = draw(st.lists(st.sampled_from(allowed), min_size=1, unique=True))
        dims = {k: draw(st.integers(1, 4096)) for k in keys}
        mappable = keys + (["Y'", "X'"] if windowed else [])
        item = st.one_of(
            st.builds(
                MapDirective,
                st.sampled_from(["spatial", "temporal"]),
                st.integers(1, 512),
                st.integers(1, 512),
                st.sampled_from(sorted(set(mappable))),
                st.just(0),
            ),
            st.builds(ClusterDirective, st.integers(1, 1024), st.just(0)),
        )
        flow = draw(st.lists(item, min_size=1, max_size=8))
        if not windowed:
            sy = sx = 1
        else:
            sy, sx = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        return MaestroLayer(name, tname, sy, sx, dims, tuple(flow), 0)

    @st.composite
    def _files(draw):
        names = draw(st.lists(_names, min_size=1, max_size=4, unique=True))
        network = draw(st.one_of(st.just(""), _names))
        return MaestroFile(network, tuple(draw(_layers(n)) for n in names), "gen.m")

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_files())
    def test_round_trip_property(mf):
        """Reading a written file gives the layers back, with MAESTRO's meaning of their
        directives (maestro_meaning: clamped sizes, strided input-row maps in output terms),
        and the text as written kept."""
        text = write_maestro(mf)
        meant = MaestroFile(mf.network, tuple(
            dataclasses.replace(la, dataflow=maestro_meaning(la.dataflow, la.type, la.dims,
                                                             {"Y": la.stride_y, "X": la.stride_x}))
            for la in mf.layers), mf.path)
        back = strip_lines(parse_maestro(text, "gen.m"))
        assert back == meant
        assert [la.written_dataflow or la.dataflow for la in back.layers] == [la.dataflow for la in mf.layers]
        assert strip_lines(parse_maestro(text.replace("\n", "\r\n"), "gen.m")) == meant

    _alphabet = st.sampled_from(list("NetworkLayerTypeCONVDimensionsDataflowSpatialMapCluster(){}:;,'/*#-+ \n\t0123456789KCRSYXPz"))

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(st.text(max_size=120), st.lists(_alphabet, max_size=200).map("".join)))
    def test_garbage_raises_only_mapping_error(text):
        try:
            parse_maestro(text, "fuzz.m")
        except MappingError as exc:
            assert str(exc).startswith("fuzz.m")

    @settings(max_examples=150, deadline=None)
    @given(st.data())
    def test_mutated_realistic_raises_only_mapping_error(data):
        pos = data.draw(st.integers(0, len(REALISTIC) - 1))
        cut = data.draw(st.integers(0, 20))
        insert = data.draw(st.sampled_from(["", "{", "}", "(", ")", ";", "0", "-", "Q", "Sz(", "/*", "'"]))
        text = REALISTIC[:pos] + insert + REALISTIC[pos + cut:]
        try:
            parse_maestro(text, P)
        except MappingError as exc:
            assert str(exc).startswith(P + ":")


# ----- errors ----------------------------------------------------------------------------------

GOOD_LAYER = "Type: CONV\nDimensions { K: 4, C: 4, R: 1, S: 1, Y: 4, X: 4 }\n"


def _layer(body: str, name: str = "a") -> str:
    """A file whose layer body starts on line 3."""
    return f"Network n {{\nLayer {name} {{\n{body}\n}}\n}}\n"


ERRORS = [
    # (text, line, key phrase)
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(1,1) K;\nFooMap(1,1) C;\n}"), 7, "unknown directive 'FooMap'"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(1,1) K;\nFooMap(1,1) C;\n}"), 7, "expected SpatialMap, TemporalMap, Cluster"),
    (_layer(GOOD_LAYER + "PoolSize { X: 2 }\nDataflow { SpatialMap(1,1) K; }"), 5, "unknown keyword 'PoolSize'"),
    (_layer(GOOD_LAYER + "SpatialMap(1,1) K;"), 5, "directives go inside 'Dataflow"),
    ("Constant A 1;\nAccelerator { }\n", 2, "expected Constant or Network"),
    ("Network n {\nLayer a {\n" + GOOD_LAYER + "Dataflow { SpatialMap(1,1) K; }\n}\n", 1,
     "'{' of Network 'n' opened at line 1 is never closed"),
    ("Network n {\nLayer a {\n" + GOOD_LAYER + "Dataflow { SpatialMap(1,1) K; }\n"
     "Layer b {\n" + GOOD_LAYER + "Dataflow { SpatialMap(1,1) K; }\n}\n}\n", 6,
     "Layer 'a' opened at line 2 is not closed before 'Layer'"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(1,1) K;\n\nDimensions { K: 4 }"), 8,
     "'{' of Dataflow of Layer 'a' opened at line 5 is not closed before 'Dimensions'"),
    (_layer(GOOD_LAYER + "Dataflow { SpatialMap(1,1) K; }") + "}\n", 8, "stray '}'"),
    ("}\n", 1, "stray '}'"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(1,1 K;\n}"), 6, "unbalanced parentheses: '(' of SpatialMap at line 6"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(Sz(R,1) K;\n}"), 6, "unbalanced parentheses"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap((1+2,1) K;\n}"), 6, "unbalanced parentheses"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(1,1)) K;\n}"), 6, "unexpected ')'"),
    (_layer("Type: CONV\nDimensions {\nK: 4,\nC: ,\nR: 1 }\nDataflow { SpatialMap(1,1) K; }"), 6, "missing ':' value for C"),
    (_layer("Type: CONV\nDimensions { K: C: 4 }\nDataflow { SpatialMap(1,1) K; }"), 4, "missing ':' value for K"),
    (_layer("Type:\nDimensions { K: 4 }\nDataflow { SpatialMap(1,1) K; }"), 3, "missing value after 'Type:'"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(1.5,1) K;\n}"), 6, "non-integer value '1.5'"),
    (_layer("Type: CONV\nDimensions { K: 4, C: 2.0 }\nDataflow { SpatialMap(1,1) K; }"), 4, "non-integer value '2.0'"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(0,1) K;\n}"), 6, "size of SpatialMap K in layer 'a' must be an integer >= 1, got 0"),
    (_layer(GOOD_LAYER + "Dataflow {\nTemporalMap(1,1-3) K;\n}"), 6, "offset of TemporalMap K in layer 'a' must be an integer >= 1, got -2"),
    (_layer(GOOD_LAYER + "Dataflow {\nCluster(Sz(R)-1, P);\n}"), 6, "size of Cluster in layer 'a' must be an integer >= 1, got 0"),
    (_layer("Type: CONV\nDimensions { K: 4,\nC: 0 }\nDataflow { SpatialMap(1,1) K; }"), 5, "dimension C of layer 'a' must be an integer >= 1"),
    (_layer("Type: CONV\nStride { X: 0 }\n" + GOOD_LAYER[11:] + "Dataflow { SpatialMap(1,1) K; }"), 4, "Stride X of layer 'a' must be an integer >= 1"),
    (_layer("Type: CONV\nDimensions { K: 4,\nM: 4 }\nDataflow { SpatialMap(1,1) K; }"), 5,
     "unknown dimension 'M' in Dimensions for Type CONV; allowed: N K C R S Y X Y' X'"),
    (_layer("Type: GEMM\nDimensions { M: 4, N: 4, K: 4 }\nDataflow {\nSpatialMap(1,1) C; }"), 6,
     "unknown dimension 'C' in SpatialMap for Type GEMM; allowed: M N K"),
    (_layer("Type: GEMM\nDimensions { M: 4, N: 4, K: 4 }\nDataflow {\nSpatialMap(1,1) Y'; }"), 6, "unknown dimension \"Y'\""),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(Sz(Q),1) K;\n}"), 6, "unknown dimension 'Q' in Sz(Q)"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(Sz(Y'),1) K;\n}"), 6, "Sz(Y') is not allowed"),
    (_layer("Type: GEMM\nDimensions { M: 4, K: 4 }\nDataflow {\nSpatialMap(Sz(N),1) K; }"), 6, "Sz(N): dimension N is not given"),
    (_layer("Type: CONV\nDimensions { K: 4, C: 4 }\nDataflow {\nSpatialMap(1,1) K;\nTemporalMap(1,1) R; }"), 7,
     "maps dimension R, which is not given in Dimensions"),
    (_layer("Type: CONV3D\nDimensions { K: 4 }\nDataflow { SpatialMap(1,1) K; }"), 3,
     "unknown Type 'CONV3D'; expected one of CONV, DSCONV, GEMM, FC, RESADD"),
    (_layer("Type: POOL\nDimensions { K: 4 }\nDataflow { SpatialMap(1,1) K; }"), 3, "'POOL' is not supported"),
    (_layer("Type: 3\nDimensions { K: 4 }\nDataflow { SpatialMap(1,1) K; }"), 3, "expected a layer type after 'Type'"),
    (_layer("Dimensions { K: 4 }\nDataflow { SpatialMap(1,1) K; }"), 2, "layer 'a' has no Type"),
    (_layer("Type: CONV\nDataflow { SpatialMap(1,1) K; }"), 2, "layer 'a' has no Dimensions block"),
    (_layer(GOOD_LAYER), 2, "layer 'a' has no Dataflow block"),
    (_layer(GOOD_LAYER + "Dataflow {\n}"), 5, "Dataflow is empty"),
    (_layer("Type: CONV\nDimensions { K: 4,\nK: 8 }\nDataflow { SpatialMap(1,1) K; }"), 5,
     "dimension K is given twice with different sizes (4 at line 4, 8 here)"),
    (_layer("Type: CONV\nDimensions { K: 4, Y: 8,\ny': 8 }\nDataflow { SpatialMap(1,1) K; }"), 5, "not both"),
    (_layer("Type: CONV\nStride { X: 1,\nX: 2 }\n" + GOOD_LAYER[11:] + "Dataflow { SpatialMap(1,1) K; }"), 5, "duplicate Stride key X"),
    (_layer("Type: CONV\nStride { Z: 1 }\n" + GOOD_LAYER[11:] + "Dataflow { SpatialMap(1,1) K; }"), 4, "unknown Stride key 'Z'"),
    (_layer(GOOD_LAYER + "Type: GEMM\nDataflow { SpatialMap(1,1) K; }"), 5, "Type is given twice (first at line 3)"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(Tile,1) K;\n}"), 6, "unknown Constant 'Tile'"),
    ("Constant Tile 2;\n" + _layer(GOOD_LAYER + "Dataflow {\nSpatialMap(tile,1) K;\n}"), 7,
     "unknown Constant 'tile' in the size of SpatialMap K in layer 'a'; defined Constants: Tile"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(R,1) K;\n}"), 6, "use Sz(D)"),
    ("Constant A 1;\nConstant A 2;\n", 2, "Constant 'A' is already defined at line 1"),
    ("Constant A B;\n", 1, "unknown Constant 'B'"),
    ("Constant A;\n", 1, "missing value for Constant 'A'"),
    ("Network n {\nConstant A 1;\n}\n", 2, "Constant must be declared at top level"),
    (_layer(GOOD_LAYER + "Dataflow { SpatialMap(1,1) K; }") + "Network m {\n}\n", 8, "exactly one Network"),
    ("Constant A 1;\n\n", 3, "no Network block found"),
    ("Network n {\n}\n", 1, "Network 'n' has no layers"),
    ("Network n {\nLayer {\n}\n}\n", 2, "missing layer name"),
    (_layer(GOOD_LAYER + "Dataflow {\nCluster(4, L);\n}"), 6, "second argument of Cluster must be P"),
    (_layer(GOOD_LAYER + "Dataflow {\nCluster(4);\n}"), 6, "Cluster needs two arguments"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(1) K;\n}"), 6, "SpatialMap needs two arguments"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap 1,1 K;\n}"), 6, "expected '(' after SpatialMap"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(1,1)\n}"), 7, "missing dimension name after SpatialMap"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(4/2,1) K;\n}"), 6, "division is not supported"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(,1) K;\n}"), 6, "missing value in the size of SpatialMap"),
    ("Network n {\n/* never\nclosed\n", 2, "block comment '/*' is never closed"),
    ("Network n {\nLayer a {\nType: CONV $\n", 3, "unexpected character '$'"),
    ("Network n\nLayer a {\n", 2, "expected '{' to open Network 'n' (line 1)"),
    (_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(99999999999999999999,1) K;\n}"), 6, "too large"),
]


@pytest.mark.parametrize("text, line, phrase", ERRORS, ids=[f"{i}-{e[2][:30]}" for i, e in enumerate(ERRORS)])
def test_errors(text, line, phrase):
    with pytest.raises(MappingError) as ei:
        parse_maestro(text, "bad/map.m")
    msg = str(ei.value)
    assert msg.startswith(f"bad/map.m:{line}: "), msg
    assert phrase in msg, msg
    assert ei.value.source == "bad/map.m" and ei.value.line == line
    assert "Traceback" not in msg


def test_deep_nesting_is_an_error_not_a_crash():
    text = _layer(GOOD_LAYER + "Dataflow { SpatialMap(" + "(" * 3000 + "1" + ")" * 3000 + ",1) K; }")
    with pytest.raises(MappingError) as ei:
        parse_maestro(text, "deep.m")
    assert str(ei.value).startswith("deep.m")


# ----- files -----------------------------------------------------------------------------------


def test_load_maestro_bom_crlf(tmp_path):
    f = tmp_path / "net.m"
    f.write_bytes(b"\xef\xbb\xbf" + REALISTIC.replace("\n", "\r\n").encode("utf-8"))
    mf = load_maestro(f)
    assert mf.path == str(f)
    assert mf == parse_maestro(REALISTIC, str(f))
    assert load_maestro(str(f)) == mf


def test_load_maestro_error_locations(tmp_path):
    f = tmp_path / "bad.m"
    f.write_text(_layer(GOOD_LAYER + "Dataflow {\nSpatialMap(0,1) K;\n}"), encoding="utf-8")
    with pytest.raises(MappingError) as ei:
        load_maestro(f)
    assert str(ei.value).startswith(f"{f}:6: ")


def test_load_maestro_missing(tmp_path):
    missing = tmp_path / "nope.m"
    with pytest.raises(MappingError) as ei:
        load_maestro(missing)
    assert str(ei.value) == f"{missing}: mapping file not found"
    assert ei.value.line is None


def test_load_maestro_not_utf8(tmp_path):
    f = tmp_path / "latin1.m"
    f.write_bytes("// caf\xe9\nNetwork n {}\n".encode("latin-1"))
    with pytest.raises(MappingError) as ei:
        load_maestro(f)
    assert str(ei.value).startswith(f"{f}:1: ") and "not UTF-8" in str(ei.value)
    assert ei.value.line == 1


def test_load_maestro_directory(tmp_path):
    with pytest.raises(MappingError) as ei:
        load_maestro(tmp_path)
    assert str(ei.value).startswith(f"{tmp_path}: ")


def test_maestro_conventions_repeated_names_and_dimensions():
    """As in MAESTRO's own files: a layer name may repeat (layers stay in file order) and a
    dimension may be given twice with the same size (MAESTRO keeps the first entry; the
    entries as written are kept for the MAESTRO model)."""
    body = "Type: CONV\nDimensions { N: 1, N: 1, K: 4, C: 2, R: 1, S: 1, Y: 4, X: 4 }\nDataflow { SpatialMap(1,1) K; }"
    mf = parse_maestro(f"Network n {{\nLayer a {{\n{body}\n}}\nLayer b {{\n{body}\n}}\nLayer a {{\n{body}\n}}\n}}\n")
    assert [la.name for la in mf.layers] == ["a", "b", "a"] and [la.line for la in mf.layers] == [2, 7, 12]
    assert mf.layers[0].dims["N"] == 1
    assert mf.layers[0].written_dims[:2] == (("N", 1), ("N", 1))


def test_maestro_meaning_of_strided_input_row_maps():
    """``TemporalMap(Sz(R),1) Y`` on a stride-2 layer means one output row per step (MAESTRO's
    ApplyOuterStride): size (3 + 2 - 3) / 2 x min(2, 3) + max(3 - 2, 0) = 3, offset 1 x 2 = 2;
    a 5-row window holds (5 + 2 - 3) / 2 = 2 output rows and advances 4. A window that already
    tiles the outputs is unchanged, and stride 1 changes nothing."""
    dims = {"K": 4, "C": 2, "R": 3, "S": 3, "Y": 9, "X": 9}
    flow = (T(3, 1, "Y", 0), T(5, 1, "X", 0), T(5, 4, "Y", 0), T(2, 1, "X", 0))
    assert maestro_meaning(flow, "CONV", dims, {"Y": 2, "X": 2}) == (
        T(3, 2, "Y", 0), T(5, 4, "X", 0), T(5, 4, "Y", 0), T(2, 1, "X", 0))
    assert maestro_meaning(flow, "CONV", dims, {"Y": 1, "X": 1}) == flow
