package dev.fencing.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A throw-away certificate authority with a server certificate for 127.0.0.1 and a client certificate, made by the
 * {@code openssl} command in a temporary directory, for an etcd that speaks TLS and demands client certificates
 * ({@link EtcdCluster#singleTls(TlsFiles)}). Each instance is a new CA with its own name, so a second one is a CA
 * that signed none of the first one's certificates. The client key is PEM PKCS#8, as the agent requires.
 */
public final class TlsFiles implements AutoCloseable {

  private static final String INSTALL_HINT = " is not installed: run `apt-get update && apt-get install -y openssl`"
      + " (Debian) — the TLS integration tests make their certificates with it";
  private static final Duration OPENSSL_TIMEOUT = Duration.ofSeconds(30);
  private static final String PKCS8_HEADER = "-----BEGIN PRIVATE KEY-----";
  /** Extensions by section, picked with {@code -extensions}; {@code [req]} spares {@code req} the system config. */
  private static final String CONFIG = """
      [req]
      distinguished_name = dn
      [dn]
      [ca]
      basicConstraints = critical,CA:TRUE
      keyUsage = critical,keyCertSign,cRLSign
      subjectKeyIdentifier = hash
      [server]
      basicConstraints = critical,CA:FALSE
      keyUsage = critical,digitalSignature,keyEncipherment
      extendedKeyUsage = serverAuth,clientAuth
      subjectAltName = IP:127.0.0.1,DNS:localhost
      [client]
      basicConstraints = critical,CA:FALSE
      keyUsage = critical,digitalSignature,keyEncipherment
      extendedKeyUsage = clientAuth
      """;

  private final Path dir;

  private TlsFiles(Path dir) {
    this.dir = dir;
  }

  /**
   * A new CA and the certificates it signed: the server's (subjectAltName IP:127.0.0.1, DNS:localhost; etcd's own
   * gateway also presents it as a client, hence clientAuth too) and a client's, valid for two days.
   */
  public static TlsFiles generate() {
    Path openssl = Processes.executable("openssl", INSTALL_HINT);
    TlsFiles files;
    try {
      files = new TlsFiles(Files.createTempDirectory("fencing-tls-"));
      Files.writeString(files.config(), CONFIG);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try {
      String id = UUID.randomUUID().toString().substring(0, 8);
      files.key(openssl, files.caKey());
      files.run(openssl, "req", "-new", "-config", files.config().toString(), "-key", files.caKey().toString(),
          "-subj", "/CN=fencing-test-ca-" + id, "-out", files.csr("ca").toString());
      files.run(openssl, "x509", "-req", "-in", files.csr("ca").toString(), "-signkey", files.caKey().toString(),
          "-extfile", files.config().toString(), "-extensions", "ca", "-days", "2",
          "-out", files.ca().toString());
      files.signed(openssl, "server", "127.0.0.1", files.serverKey(), files.serverCert());
      // genrsa writes PKCS#1 before OpenSSL 3: convert, whatever it wrote, to the PKCS#8 the agent reads.
      Path original = files.dir.resolve("client-original.key");
      files.signed(openssl, "client", "fencing-test-client-" + id, original, files.clientCert());
      files.run(openssl, "pkcs8", "-topk8", "-nocrypt", "-in", original.toString(),
          "-out", files.clientKey().toString());
      if (!Processes.read(files.clientKey()).startsWith(PKCS8_HEADER)) {
        throw new IllegalStateException("openssl pkcs8 -topk8 wrote no PKCS#8 key to " + files.clientKey()
            + ":\n" + Processes.read(files.clientKey()));
      }
      return files;
    } catch (RuntimeException | Error e) {
      files.close();
      throw e;
    }
  }

  public Path dir() {
    return dir;
  }

  /** The CA certificate (PEM): the trust anchor for both sides. */
  public Path ca() {
    return dir.resolve("ca.crt");
  }

  public Path serverCert() {
    return dir.resolve("server.crt");
  }

  public Path serverKey() {
    return dir.resolve("server.key");
  }

  public Path clientCert() {
    return dir.resolve("client.crt");
  }

  /** The client's private key as PEM PKCS#8 ({@code BEGIN PRIVATE KEY}), unencrypted. */
  public Path clientKey() {
    return dir.resolve("client.key");
  }

  /** Deletes the directory, keys included. */
  @Override
  public void close() {
    Processes.deleteTree(dir);
  }

  @Override
  public String toString() {
    return "TLS files in " + dir;
  }

  private Path caKey() {
    return dir.resolve("ca.key");
  }

  private Path config() {
    return dir.resolve("openssl.cnf");
  }

  private Path csr(String name) {
    return dir.resolve(name + ".csr");
  }

  private void key(Path openssl, Path key) {
    run(openssl, "genrsa", "-out", key.toString(), "2048");
  }

  /** A key and a certificate for {@code commonName}, signed by this CA with the extensions of {@code section}. */
  private void signed(Path openssl, String section, String commonName, Path key, Path cert) {
    key(openssl, key);
    run(openssl, "req", "-new", "-config", config().toString(), "-key", key.toString(),
        "-subj", "/CN=" + commonName, "-out", csr(section).toString());
    String serial = "0x" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    run(openssl, "x509", "-req", "-in", csr(section).toString(), "-CA", ca().toString(),
        "-CAkey", caKey().toString(), "-set_serial", serial,
        "-extfile", config().toString(), "-extensions", section, "-days", "2", "-out", cert.toString());
  }

  private void run(Path openssl, String... args) {
    List<String> command = new ArrayList<>();
    command.add(openssl.toString());
    command.addAll(List.of(args));
    Processes.Result result = Processes.run(OPENSSL_TIMEOUT, Map.of(), command);
    if (!result.ok()) {
      throw new IllegalStateException("openssl " + String.join(" ", args) + " failed (exit " + result.exitCode()
          + "): " + result.stderr() + result.stdout());
    }
  }
}
