#include "paramserver/security.h"


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
  std::string token = read_text_file(path, "auth token file");
  const auto first = token.find_first_not_of(" \t\r\n");
  const auto last = token.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) fail_input("auth token file {} is empty", path);
  return token.substr(first, last - first + 1);
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
