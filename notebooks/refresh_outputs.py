"""Execute the notebooks and save them with their outputs (so they render on the repository page).

Run: ``python -m uv run --frozen --all-extras python notebooks/refresh_outputs.py``.
"""

import pathlib

import nbclient
import nbformat

HERE = pathlib.Path(__file__).parent

for path in sorted(HERE.glob("*.ipynb")):
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
    )
    client.execute()
    nbformat.write(notebook, path)
    print(f"{path.name}: executed and saved")
