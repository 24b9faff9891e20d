// TLS: a server with a certificate serves workers that trust its CA, and nobody else; with a
// client CA it also requires the workers' certificates. The certificates are made here by openssl.
#include <filesystem>

#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

namespace fs = std::filesystem;

class Tls : public PsTest {
 protected:
  void SetUp() override {
    PsTest::SetUp();
    if (std::system("openssl version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no openssl to make certificates";
    dir_ = fs::temp_directory_path() /
           ("dtbench-ps-tls-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::string d = dir_.string();
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string script =
        "cd " + d + " && set -e && "
        "openssl req -x509 " + ec + " -keyout ca.key -out ca.pem -days 2 -subj /CN=dtbench-test-ca && "
        "openssl req -x509 " + ec + " -keyout other-ca.key -out other-ca.pem -days 2 -subj /CN=other-ca && "
        "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nextendedKeyUsage=serverAuth\\n' > server.ext && "
        "printf 'extendedKeyUsage=clientAuth\\n' > client.ext && "
        "openssl req " + ec + " -keyout server.key -out server.csr -subj /CN=localhost && "
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 "
        "  -extfile server.ext && "
        "openssl req " + ec + " -keyout client.key -out client.csr -subj /CN=worker && "
        "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out client.pem -days 2 "
        "  -extfile client.ext";
    ASSERT_EQ(std::system(("(" + script + ") > " + d + "/openssl.log 2>&1").c_str()), 0)
        << "openssl failed; see " << d << "/openssl.log";
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  ServerSet tls_server(bool require_client_certificate) {
    return start_servers(1, 1, PsMode::Sync, sgd_momentum(), [&](ParameterServerOptions& o) {
      o.security.tls_cert_file = file("server.pem");
      o.security.tls_key_file = file("server.key");
      if (require_client_certificate) o.security.tls_client_ca_file = file("ca.pem");
    });
  }

  static void one_step(ServerSet& servers, const ClientSecurity& security, double timeout = 10.0 * kTimeScale) {
    auto model = small_model();
    PsTransportOptions options = transport_options(servers, PsMode::Sync, 0, 1);
    options.security = security;
    options.security.auth_token = servers[0].auth_token();  // TLS and the token together
    options.timeout_seconds = timeout;
    PsTransport transport(options);
    transport.start(*model);
    compute_gradients(*model, make_batch(5, 4));
    transport.finish_step(*model, 0);
  }

  fs::path dir_;
};

TEST_F(Tls, WorkersThatTrustTheCaAreServedOthersAreNot) {
  ServerSet servers = tls_server(false);
  ClientSecurity trusted;
  trusted.tls_ca_file = file("ca.pem");
  one_step(servers, trusted);
  EXPECT_EQ(servers[0].version(), 1);

  EXPECT_THROW(one_step(servers, ClientSecurity{}, 1.0), IoError) << "a plaintext client was served";
  ClientSecurity wrong_ca;
  wrong_ca.tls_ca_file = file("other-ca.pem");
  EXPECT_THROW(one_step(servers, wrong_ca, 1.0), IoError) << "a client that trusts another CA connected";
  EXPECT_EQ(servers[0].version(), 1);
}

TEST_F(Tls, ClientCertificatesWhenTheServerRequiresThem) {
  ServerSet servers = tls_server(true);
  ClientSecurity without;
  without.tls_ca_file = file("ca.pem");
  EXPECT_THROW(one_step(servers, without, 1.0), IoError);
  ClientSecurity with = without;
  with.tls_cert_file = file("client.pem");
  with.tls_key_file = file("client.key");
  one_step(servers, with);
  EXPECT_EQ(servers[0].version(), 1);
}

}  // namespace
}  // namespace dtbench::pstest
