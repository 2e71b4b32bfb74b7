# float64 that stays on the CPU in a training script for the neuron device: data loading,
# metrics and NumPy interop, shaped like the torch-neuronx training samples of
# aws-neuron/aws-neuron-samples (mnist, bert) and HF's run_glue metrics. Nothing is reported.
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

device = torch.device("neuron")


class CsvDataset(Dataset):
    def __init__(self, rows: np.ndarray) -> None:
        self.features = torch.from_numpy(rows[:, :-1]).double()
        self.labels = torch.tensor(rows[:, -1], dtype=torch.float64)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.features[index].float(), self.labels[index].long()


def accuracy(outputs: torch.Tensor, labels: torch.Tensor) -> float:
    predictions = outputs.argmax(dim=-1).cpu()
    correct = (predictions == labels.cpu()).to(torch.float64).sum()
    return float(correct / len(labels))


def evaluate(model: torch.nn.Module, loader: DataLoader) -> dict[str, float]:
    losses = []
    for inputs, labels in loader:
        inputs, labels = inputs.to(device), labels.to(device)
        losses.append(model(inputs).mean().item())
    history = torch.tensor(losses, dtype=torch.float64)
    as_numpy = history.numpy().astype(np.float64)
    return {"loss": history.mean().item(), "std": float(as_numpy.std())}
