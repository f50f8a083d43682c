"""The package's one table of element types agrees with the compiler's
ElementType enum, name for name, in code order."""
from fusion import _fusion
from fusion.dtypes import ELEMENT_TYPES, TORCH_DTYPES


def test_element_types_match_the_dialect():
    assert list(TORCH_DTYPES) == _fusion.element_types()
    assert {name: dtype for dtype, name in ELEMENT_TYPES.items()} == \
        TORCH_DTYPES
