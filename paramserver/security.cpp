#include "paramserver/security.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <grpcpp/client_context.h>

#include "core/util/error.h"
#include "core/util/files.h"

namespace dtbench {

namespace {

constexpr const char* kAuthorization = "authorization";
constexpr std::string_view kBearer = "Bearer ";

}  // namespace

std::string read_text_file(const std::string& path, const std::string& what) {
  std::optional<std::string> text = read_file(path);
  if (!text) fail_input("{} {}: cannot read it (does the file exist?)", what, path);
  return std::move(*text);
}

std::string read_token_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && (info.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    fail_input("auth token file {} is readable by group or others (mode {:04o}); a token others can read guards "
               "nothing: chmod 600 {}",
               path, info.st_mode & 07777, path);
  }
  std::string token = read_text_file(path, "auth token file");
  const auto first = token.find_first_not_of(" \t\r\n");
  const auto last = token.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) fail_input("auth token file {} is empty", path);
  return token.substr(first, last - first + 1);
}

std::string generate_token() {
  unsigned char bytes[32];
  size_t filled = 0;
  while (filled < sizeof(bytes)) {
    const ssize_t got = getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw IoError(fmt::format("cannot make an auth token: getrandom: {}", std::strerror(errno)));
    filled += static_cast<size_t>(got);
  }
  std::string hex;
  for (unsigned char byte : bytes) hex += fmt::format("{:02x}", byte);
  return hex;
}

std::string create_token_file(const std::string& path) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string aside = fmt::format("{}.{}-{}", path, getpid(), generate_token().substr(0, 8));
  const int fd = ::open(aside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw IoError(fmt::format("auth token file {}: cannot create it: {}", aside, std::strerror(errno)));
  const std::string token = generate_token();
  const std::string line = token + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  ::close(fd);
  const int linked = written ? ::link(aside.c_str(), path.c_str()) : -1;
  const int link_error = errno;
  ::unlink(aside.c_str());
  if (!written) throw IoError(fmt::format("auth token file {}: cannot write it", aside));
  if (linked == 0) return token;
  if (link_error != EEXIST) {
    throw IoError(fmt::format("auth token file {}: cannot create it: {}", path, std::strerror(link_error)));
  }
  return read_token_file(path);  // another server of the run made it first
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  const size_t length = std::max(a.size(), b.size());
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < length; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    difference |= static_cast<unsigned char>(x ^ y);
  }
  return difference == 0;
}

grpc::Status check_token(const grpc::ServerContextBase& context, const std::string& expected) {
  if (expected.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find(kAuthorization);
  if (found == metadata.end()) {
    return {grpc::StatusCode::UNAUTHENTICATED, "this parameter server requires an auth token and the call carried none"};
  }
  const std::string_view value(found->second.data(), found->second.size());
  const bool bearer = value.substr(0, kBearer.size()) == kBearer;
  if (!bearer || !constant_time_equal(value.substr(kBearer.size()), expected)) {
    return {grpc::StatusCode::UNAUTHENTICATED, "the call's auth token does not match this parameter server's"};
  }
  return grpc::Status::OK;
}

void attach_token(grpc::ClientContext& context, const std::string& token) {
  if (!token.empty()) context.AddMetadata(kAuthorization, std::string(kBearer) + token);
}

std::shared_ptr<grpc::ServerCredentials> make_server_credentials(const ServerSecurity& security) {
  const bool cert = !security.tls_cert_file.empty(), key = !security.tls_key_file.empty();
  if (cert != key) fail_input("TLS needs both --tls-cert and --tls-key");
  if (!cert) {
    if (!security.tls_client_ca_file.empty()) fail_input("--tls-client-ca needs --tls-cert and --tls-key");
    return grpc::InsecureServerCredentials();
  }
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({read_text_file(security.tls_key_file, "TLS key"),
                                        read_text_file(security.tls_cert_file, "TLS certificate")});
  if (!security.tls_client_ca_file.empty()) {
    options.pem_root_certs = read_text_file(security.tls_client_ca_file, "TLS client CA");
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> make_channel_credentials(const ClientSecurity& security) {
  if (security.tls_ca_file.empty()) {
    if (!security.tls_cert_file.empty()) fail_input("ps.tls_cert needs ps.tls_ca (the CA that signed the servers)");
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = read_text_file(security.tls_ca_file, "TLS CA");
  if (!security.tls_cert_file.empty()) {
    options.pem_cert_chain = read_text_file(security.tls_cert_file, "TLS certificate");
    options.pem_private_key = read_text_file(security.tls_key_file, "TLS key");
  }
  return grpc::SslCredentials(options);
}

}  // namespace dtbench
