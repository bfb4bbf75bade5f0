package dev.fencing.agent.lease;

import dev.fencing.agent.config.AgentConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.zookeeper.ClientCnxnSocketNIO;
import org.apache.zookeeper.ClientCnxnSocketNetty;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;
import org.apache.zookeeper.data.ACL;

/**
 * How the agent's ZooKeeper client connects, from fencing.zookeeper.*: the connect string, the session timeout it
 * asks for, the socket and TLS settings, SASL off, the digest credentials of fencing.zookeeper.auth-file and the ACL
 * of the nodes it creates. Never from the host's {@code zookeeper.*} system properties, which belong to the
 * application's own ZooKeeper client (whose classes are not ours). Its errors name the settings to check.
 */
final class ZooKeeperClientConfig {
  private final String connect;
  private final int sessionTimeoutMs;
  private final ZKClientConfig clientConfig;
  /** What a session that never came up over TLS may mean, for the FAILED detail ("" without TLS). */
  private final String tlsHint;
  private final byte[] auth;
  private final String authUser;
  private final List<ACL> acl;

  ZooKeeperClientConfig(AgentConfig config) throws IOException {
    this.connect = config.zookeeperConnect();
    this.sessionTimeoutMs = (int) Math.min(Integer.MAX_VALUE, config.zookeeperSessionTimeout().toMillis());
    ZKClientConfig c = new ZKClientConfig();
    c.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
    if (config.zookeeperTruststore() != null) {
      c.setProperty(ZKClientConfig.SECURE_CLIENT, "true");
      // Class objects, not names: the shaded jar relocates these classes, and a name in a string would not follow.
      c.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientCnxnSocketNetty.class.getName());
      try (ClientX509Util x509 = new ClientX509Util()) {
        c.setProperty(x509.getSslTruststoreLocationProperty(), config.zookeeperTruststore().toString());
        c.setProperty(x509.getSslTruststoreTypeProperty(), StoreType.of(config.zookeeperTruststore()));
        c.setProperty(x509.getSslTruststorePasswdProperty(), firstLine(config.zookeeperTruststorePasswordFile()));
        if (config.zookeeperKeystore() != null) {
          c.setProperty(x509.getSslKeystoreLocationProperty(), config.zookeeperKeystore().toString());
          c.setProperty(x509.getSslKeystoreTypeProperty(), StoreType.of(config.zookeeperKeystore()));
          c.setProperty(x509.getSslKeystorePasswdProperty(), firstLine(config.zookeeperKeystorePasswordFile()));
        }
      }
    } else {
      c.setProperty(ZKClientConfig.SECURE_CLIENT, "false");
      c.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, ClientCnxnSocketNIO.class.getName());
    }
    this.clientConfig = c;
    this.tlsHint = config.zookeeperTruststore() == null ? "" : "; over TLS: check that these are the servers' secure"
        + " client ports (secureClientPort), that fencing.zookeeper.tls.truststore (" + config.zookeeperTruststore()
        + ") holds the CA that signed their certificates and, if they require client authentication, that"
        + " fencing.zookeeper.tls.keystore " + (config.zookeeperKeystore() == null ? "is set (it is not)"
            : "(" + config.zookeeperKeystore() + ") holds a certificate they trust")
        + "; the TLS handshake's own error is in the agent's log";
    if (config.zookeeperAuthFile() != null) {
      String line = firstLine(config.zookeeperAuthFile());
      int colon = line.indexOf(':');
      if (colon <= 0) {
        throw new IOException(config.zookeeperAuthFile() + " (fencing.zookeeper.auth-file): expected user:password on "
            + "its first line");
      }
      this.authUser = line.substring(0, colon);
      this.auth = line.getBytes(StandardCharsets.UTF_8);
      this.acl = ZooDefs.Ids.CREATOR_ALL_ACL;
    } else {
      this.authUser = null;
      this.auth = null;
      this.acl = ZooDefs.Ids.OPEN_ACL_UNSAFE;
    }
  }

  private static String firstLine(Path file) throws IOException {
    if (file == null) {
      return "";
    }
    return Files.readAllLines(file, StandardCharsets.UTF_8).stream().findFirst().orElse("").trim();
  }

  /** A new client handle asking for a session; its credentials go before any request of the session. */
  ZooKeeper open(Watcher watcher) throws IOException {
    ZooKeeper z = new ZooKeeper(connect, sessionTimeoutMs, watcher, clientConfig);
    if (auth != null) {
      z.addAuthInfo("digest", auth); // sent before any request of this session, and again on every reconnect
    }
    return z;
  }

  /** fencing.zookeeper.connect. */
  String connect() {
    return connect;
  }

  /** What a session that never came up over TLS may mean ("" without TLS). */
  String tlsHint() {
    return tlsHint;
  }

  /** The ACL of the nodes the agent creates: its credentials' alone with an auth file, else open. */
  List<ACL> acl() {
    return acl;
  }

  /** A KeeperException whose message tells an operator what to check. */
  Exception failure(KeeperException.Code code, String path) {
    String hint;
    switch (code) {
      case NOAUTH:
        hint = auth == null
            ? "the node's ACL needs credentials: set fencing.zookeeper.auth-file (user:password)"
            : "the credentials of fencing.zookeeper.auth-file (user '" + authUser + "') are not allowed by the node's "
                + "ACL: wrong password or user?";
        break;
      case NONODE:
        hint = "a parent node is missing (the chroot of fencing.zookeeper.connect must exist)";
        break;
      case AUTHFAILED:
        hint = "the server refused the credentials of fencing.zookeeper.auth-file";
        break;
      default:
        return KeeperException.create(code, path);
    }
    // No cause: the agent's log and /status describe an error by its root cause, which would hide the hint.
    return new IOException("ZooKeeper refused " + path + " (" + code + "): " + hint);
  }
}
