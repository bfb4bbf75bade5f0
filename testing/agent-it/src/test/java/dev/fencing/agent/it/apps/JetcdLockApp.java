package dev.fencing.agent.it.apps;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.election.LeaderKey;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.grpc.stub.StreamObserver;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * An ordinary application taking its own jetcd {@code Lock} on a lease it keeps alive (no fencing code), or
 * campaigning in an {@code Election} on it, driven on stdin. Arguments: etcd endpoints, lease TTL in seconds, lock or
 * election name, JDBC URL, and {@code lock} (the default) or {@code election}. Commands: {@code LOCK} (waits for the
 * lock or the leadership with {@code get()}, prints {@code OK locked}), {@code UNLOCK} (unlock, resign),
 * {@code SQL <statement>}.
 */
public final class JetcdLockApp {
  private JetcdLockApp() {}

  public static void main(String[] args) throws Exception {
    try (Client client = Client.builder().endpoints(args[0].split(",")).build();
        Connection c = DriverManager.getConnection(args[3])) {
      long lease = client.getLeaseClient().grant(Long.parseLong(args[1])).get().getID();
      client.getLeaseClient().keepAlive(lease, new StreamObserver<LeaseKeepAliveResponse>() {
        @Override
        public void onNext(LeaseKeepAliveResponse value) {}

        @Override
        public void onError(Throwable t) {
          System.out.println("LEASE " + t);
        }

        @Override
        public void onCompleted() {}
      });
      ByteSequence name = ByteSequence.from(args[2], StandardCharsets.UTF_8);
      boolean election = args.length > 4 && args[4].equals("election");
      ByteSequence key = null;
      LeaderKey leader = null;
      System.out.println("APP STARTED");
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
      for (String line; (line = in.readLine()) != null; ) {
        try {
          if (line.equals("LOCK")) {
            if (election) {
              leader = client.getElectionClient().campaign(name, lease, ByteSequence.from("me", StandardCharsets.UTF_8))
                  .get().getLeader();
            } else {
              key = client.getLockClient().lock(name, lease).get().getKey();
            }
            System.out.println("OK locked");
          } else if (line.equals("UNLOCK")) {
            if (election) {
              client.getElectionClient().resign(leader).get();
            } else {
              client.getLockClient().unlock(key).get();
            }
            System.out.println("OK unlocked");
          } else if (line.startsWith("SQL ")) {
            try (Statement s = c.createStatement()) {
              System.out.println("OK " + s.executeUpdate(line.substring(4)));
            }
          } else {
            System.out.println("ERR unknown command " + line);
          }
        } catch (SQLException e) {
          System.out.println("ERR " + e.getSQLState() + " " + e.getMessage().replace('\n', ' '));
        } catch (Exception e) {
          System.out.println("ERR " + e);
        }
      }
    }
  }
}
