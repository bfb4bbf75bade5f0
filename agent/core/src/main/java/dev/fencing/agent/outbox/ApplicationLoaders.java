package dev.fencing.agent.outbox;

import java.sql.Driver;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * Where the in-agent relay finds the JDBC driver and kafka-clients: in the application's own class loaders, never in
 * the agent (which bundles neither, and whose isolated loader sees none of the application's classes). The candidates,
 * in order: the context class loader of the thread premain ran on (the application's main thread; a launcher such as
 * Spring Boot's sets it to the loader of the fat jar's libraries before the application starts), then the system
 * class loader (a plain class path). A driver is one that loader's {@code META-INF/services/java.sql.Driver} names
 * and that accepts the URL; kafka-clients comes from the same loader.
 */
final class ApplicationLoaders {
  /** A driver found, and the loader it came from (the one kafka-clients is looked up in). */
  record Found(Driver driver, ClassLoader loader) {}

  private final Thread mainThread;

  /** @param mainThread the thread premain ran on; null when the agent was attached to a running JVM */
  ApplicationLoaders(Thread mainThread) {
    this.mainThread = mainThread;
  }

  List<ClassLoader> candidates() {
    List<ClassLoader> loaders = new ArrayList<>();
    ClassLoader main = mainThread == null ? null : mainThread.getContextClassLoader();
    if (main != null) {
      loaders.add(main);
    }
    ClassLoader system = ClassLoader.getSystemClassLoader();
    if (!loaders.contains(system)) {
      loaders.add(system);
    }
    return loaders;
  }

  /** The application's driver that accepts {@code url}; null when none of the loaders has one (yet). */
  Found driverFor(String url) {
    for (ClassLoader loader : candidates()) {
      Iterator<Driver> drivers = ServiceLoader.load(Driver.class, loader).iterator();
      while (true) {
        Driver d;
        try {
          if (!drivers.hasNext()) {
            break;
          }
          d = drivers.next();
        } catch (ServiceConfigurationError | LinkageError e) {
          continue; // a provider that does not load here; the next one may
        }
        try {
          if (d.acceptsURL(url)) {
            return new Found(d, loader);
          }
        } catch (SQLException | RuntimeException e) {
          // not this one
        }
      }
    }
    return null;
  }

  /** Whether kafka-clients can be loaded from {@code loader}. */
  static boolean hasKafkaClients(ClassLoader loader) {
    try {
      Class.forName("org.apache.kafka.clients.producer.KafkaProducer", false, loader);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  static String describe(List<ClassLoader> loaders) {
    StringBuilder sb = new StringBuilder();
    for (ClassLoader l : loaders) {
      sb.append(sb.length() == 0 ? "" : ", ").append(l.getName() != null ? l.getName() : l.getClass().getName());
    }
    return sb.toString();
  }
}
