package dev.fencing.testing;

import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;

/**
 * Entry point of the {@link KafkaBroker} child JVM: formats the log dir (KRaft, standalone controller; a restart
 * finds it formatted and keeps it), then runs the broker, in one JVM instead of two (a JVM start of the Kafka tools
 * costs ~1.5 s). Reflection keeps the harness free of a compile-time dependency on Kafka's server classes.
 *
 * <p>Arguments: cluster id, path of server.properties.
 */
public final class KafkaBrokerMain {
  private KafkaBrokerMain() {}

  public static void main(String[] args) throws Exception {
    String clusterId = args[0];
    String properties = args[1];
    try {
      Object exit = Class.forName("kafka.tools.StorageTool")
          .getMethod("execute", String[].class, PrintStream.class)
          .invoke(null, new String[] {"format", "-t", clusterId, "-c", properties, "--standalone",
              "--ignore-formatted"}, System.out);
      if (!Integer.valueOf(0).equals(exit)) {
        System.out.println("KAFKA-HARNESS: formatting the log dir failed with " + exit);
        System.exit(1);
      }
      System.out.println("KAFKA-HARNESS: formatted");
      Class.forName("kafka.Kafka").getMethod("main", String[].class).invoke(null, (Object) new String[] {properties});
    } catch (InvocationTargetException e) {
      e.getCause().printStackTrace();
      System.exit(1);
    }
  }
}
