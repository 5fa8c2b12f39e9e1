"""Type stubs of the extension module (src/lib.rs); use the wrappers in rebalance_sim."""

from os import PathLike
from typing import Dict, List, Optional, Sequence, Tuple, Union

VERSION: str
TEXT_SOURCE_NAME: str

class ScenarioError(ValueError): ...

def run(
    *,
    path: Optional[Union[str, PathLike[str]]] = None,
    text: Optional[str] = None,
    seed: Optional[int] = None,
    protocols: Sequence[str] = ...,
    jobs: Optional[int] = None,
) -> Tuple[Dict[str, bytes], List[str]]: ...
def validate(
    *,
    path: Optional[Union[str, PathLike[str]]] = None,
    text: Optional[str] = None,
) -> Tuple[str, List[str], int, List[str]]: ...
def sweep(
    path: Union[str, PathLike[str]],
    *,
    seeds: Optional[int] = None,
    jobs: Optional[int] = None,
    out: Optional[Union[str, PathLike[str]]] = None,
) -> Tuple[Dict[str, bytes], int, int]: ...
