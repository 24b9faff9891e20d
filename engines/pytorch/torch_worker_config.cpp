#include "engines/pytorch/torch_worker_config.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench {

namespace {

struct Ipv4Interface {
  std::string name, address;
  bool up = false, loopback = false;
};

// This host's interfaces with an IPv4 address, in getifaddrs' order.
std::vector<Ipv4Interface> ipv4_interfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) throw IoError(fmt::format("getifaddrs: {}", std::strerror(errno)));
  std::vector<Ipv4Interface> found;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof(text));
    found.push_back({.name = a->ifa_name, .address = text, .up = (a->ifa_flags & IFF_UP) != 0,
                     .loopback = (a->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(list);
  return found;
}

// The address of `iface`, or of the first interface up that is not loopback.
std::string interface_address(const std::string& iface) {
  for (const Ipv4Interface& i : ipv4_interfaces()) {
    if (i.up && (iface.empty() ? !i.loopback : iface == i.name)) return i.address;
  }
  throw IoError(iface.empty() ? std::string("no network interface up with an IPv4 address for DDP's rendezvous")
                              : fmt::format("comm.iface {}: no IPv4 address on it for DDP's rendezvous", iface));
}

// The interface that holds `local`, an address of this host; "" if none does.
std::string interface_holding(const std::string& local) {
  for (const Ipv4Interface& i : ipv4_interfaces()) {
    if (i.address == local) return i.name;
  }
  return "";
}

// The address this host sends from towards `peer`: the kernel's route, asked by connecting a UDP
// socket (which sends nothing).
std::string local_address_towards(const std::string& peer) {
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(9);
  if (inet_pton(AF_INET, peer.c_str(), &where.sin_addr) != 1) return "";
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  socklen_t length = sizeof(where);
  const bool ok = fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&where), sizeof(where)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&where), &length) == 0;
  if (fd >= 0) close(fd);
  if (!ok) return "";
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &where.sin_addr, text, sizeof(text));
  return text;
}

int free_port(const std::string& address) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in where{};
  where.sin_family = AF_INET;
  inet_pton(AF_INET, address.c_str(), &where.sin_addr);
  socklen_t length = sizeof(where);
  const bool ok = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&where), sizeof(where)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&where), &length) == 0;
  const int error = errno;
  if (fd >= 0) close(fd);
  if (!ok) throw IoError(fmt::format("a free port on {} for DDP's rendezvous: {}", address, std::strerror(error)));
  return ntohs(where.sin_port);
}

}  // namespace

nlohmann::json torch_worker_config(const Blueprint& bp, const Model& model, int rank, int world, int threads,
                                   const std::string& init_method, const std::string& save_weights_path) {
  const OptimizerConfig& o = bp.optimizer;
  return {{"model", bp.model},
          {"input", model.sample_input_shape()},
          {"classes", model.classes()},
          {"batch", bp.batch},
          {"epochs", bp.epochs},
          {"max_steps", bp.steps},
          {"optimizer",
           {{"name", o.name}, {"lr", o.learning_rate}, {"momentum", o.momentum}, {"weight_decay", o.weight_decay},
            {"nesterov", o.nesterov}, {"beta1", o.beta1}, {"beta2", o.beta2}, {"epsilon", o.epsilon}}},
          {"threads", threads},
          {"seed", bp.seed},
          {"data",
           {{"format", bp.data.format}, {"path", bp.data.path}, {"resize", bp.data.resize},
            {"augment", bp.data.augment}}},
          {"eval_max_samples", bp.eval_max_samples},
          {"rank", rank},
          {"world", world},
          {"transport", bp.transport},
          {"bucket_mb", bp.comm.bucket_mb},
          {"init_method", init_method},
          {"iface", ddp_interface(bp.comm.iface, init_method)},
          {"timeout_s", bp.comm.timeout_s},
          {"save_weights_path", save_weights_path},
          {"trace_steps", bp.trace_steps},
          {"pytorch", {{"profile", bp.pytorch.profile}, {"ddp_hook", bp.pytorch.ddp_hook}}},
          {"precision", bp.precision}};
}

TorchWorkerSetup torch_worker_setup(const Blueprint& bp, const Model& model, const Dataset& train, int rank,
                                    int world, int threads, const std::string& init_method,
                                    const std::filesystem::path& run_dir) {
  const auto weights = bp.save_weights && rank == 0 ? run_dir / "weights.bin" : std::filesystem::path();
  return {.config = torch_worker_config(bp, model, rank, world, threads, init_method, weights.string()),
          .input_dir = run_dir / fmt::format("pytorch-{}", rank),
          .worker_script = torch_worker_script(),
          .python = torch_python(),
          .model = &model,
          .train = &train,
          .rank = rank,
          .world = world,
          .seed = bp.seed,
          .epochs = bp.epochs,
          .augment = bp.data.augment};
}

std::string ddp_rendezvous(const std::string& iface, bool every_worker_here) {
  const std::string address = every_worker_here && iface.empty() ? "127.0.0.1" : interface_address(iface);
  return fmt::format("tcp://{}:{}", address, free_port(address));
}

std::string ddp_interface(const std::string& iface, const std::string& init_method) {
  if (!iface.empty() || init_method.empty()) return iface;
  const std::string prefix = "tcp://";
  if (init_method.rfind(prefix, 0) != 0) return "";
  const std::string host = init_method.substr(prefix.size(), init_method.rfind(':') - prefix.size());
  const std::string local = local_address_towards(host);
  if (local.empty()) {
    throw IoError(fmt::format("DDP's rendezvous {}: no route from this host to {}", init_method, host));
  }
  return interface_holding(local);
}

}  // namespace dtbench
