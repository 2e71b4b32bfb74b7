import torch

device = "cuda"  # expect: cuda-device-string
DEVICE = "cuda:0" if torch.cuda.is_available() else "cpu"  # expect: cuda-device-string, cuda-api
model = torch.nn.Linear(2, 2).to("cuda")  # expect: cuda-device-string
x = torch.zeros(2, device="cuda:1")  # expect: cuda-device-string
y = torch.zeros(2, device=torch.device("cuda"))  # expect: cuda-device-string
rank = 0
z = torch.zeros(2).to(f"cuda:{rank}")  # expect: cuda-device-string
model.cuda()  # expect: cuda-method
torch.cuda.synchronize()  # expect: cuda-api
count = torch.cuda.device_count()  # expect: cuda-api
with torch.autocast(device_type="cuda", dtype=torch.bfloat16):  # expect: cuda-device-string
    pass
scaler = torch.cuda.amp.GradScaler()  # expect: cuda-api
config = {"device": "cuda"}  # expect: cuda-device-string


def build(device="cuda"):  # expect: cuda-device-string
    return torch.nn.Linear(2, 2).to(device)
