#pragma once
// Who may talk to a parameter server. Servers listen on loopback unless told otherwise; with a
// shared token every call must carry "authorization: Bearer <token>" (compared in constant time)
// or is refused with UNAUTHENTICATED; with TLS the server presents a certificate (and, given a
// client CA, requires one from the workers) and workers verify it against a CA file.
#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_context.h>

namespace dtbench {

struct ServerSecurity {
  std::string auth_token;      // empty: a server makes one, unless insecure
  bool insecure = false;       // serve without a token
  std::string tls_cert_file;   // PEM; with tls_key_file: serve TLS
  std::string tls_key_file;
  std::string tls_client_ca_file;  // PEM; when set, clients must present a certificate it signed
};

struct ClientSecurity {
  std::string auth_token;
  std::string tls_ca_file;    // PEM; set: connect with TLS and verify the server against it
  std::string tls_cert_file;  // optional client certificate and key (servers that require one)
  std::string tls_key_file;
  std::string tls_target_name;  // optional: the name the server's certificate carries
};

std::shared_ptr<grpc::ServerCredentials> make_server_credentials(const ServerSecurity& security);
std::shared_ptr<grpc::ChannelCredentials> make_channel_credentials(const ClientSecurity& security);

// 32 random bytes (getrandom), in hex.
std::string generate_token();
// The token in a file, surrounding white space removed; InputError when unreadable, empty, or
// readable by group or others (a token anyone can read guards nothing).
std::string read_token_file(const std::string& path);
// The token in `path`; when there is no such file, a fresh token written there first, mode 0600.
// Creating is atomic (written aside, then linked into place), so servers starting together on one
// output directory all end up with the token of whichever linked first.
std::string create_token_file(const std::string& path);
// The whole file; InputError naming `what` when unreadable.
std::string read_text_file(const std::string& path, const std::string& what);

// Equal strings, in time that depends only on their lengths.
bool constant_time_equal(std::string_view a, std::string_view b);

// OK when the call carries the server's token (or the server needs none), UNAUTHENTICATED else.
grpc::Status check_token(const grpc::ServerContextBase& context, const std::string& expected);
void attach_token(grpc::ClientContext& context, const std::string& token);

}  // namespace dtbench
