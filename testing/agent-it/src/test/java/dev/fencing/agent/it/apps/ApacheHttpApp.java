package dev.fencing.agent.it.apps;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * An ordinary Apache HttpClient application (no fencing code) that runs several versions of the library side by
 * side, each in its own class loader: arguments {@code <label>=<dir of jars>}, optionally after
 * {@code driver=<class>} (default {@link ApacheHttpDriver}, HttpClient 5; {@link ApacheHttp4Driver} for 4.x). Driven
 * over stdin with {@code <label> SYNC|ASYNC <method> <url>}; prints {@code STATUS ...} or {@code ERR ...}.
 * This class itself never touches the library (it is not on the application class path).
 */
public final class ApacheHttpApp {
  private ApacheHttpApp() {}

  @SuppressWarnings("unchecked")
  public static void main(String[] args) throws Exception {
    URL appClasses = ApacheHttpApp.class.getProtectionDomain().getCodeSource().getLocation();
    Map<String, Function<String, String>> drivers = new LinkedHashMap<>();
    String driverClass = ApacheHttpDriver.class.getName();
    for (String arg : args) {
      if (arg.startsWith("driver=")) {
        driverClass = arg.substring("driver=".length());
        continue;
      }
      String label = arg.substring(0, arg.indexOf('='));
      File[] jars = new File(arg.substring(arg.indexOf('=') + 1)).listFiles((d, n) -> n.endsWith(".jar"));
      if (jars == null || jars.length == 0) {
        throw new IllegalArgumentException("no jars in " + arg);
      }
      List<URL> urls = new ArrayList<>();
      for (File jar : jars) {
        urls.add(jar.toURI().toURL());
      }
      urls.add(appClasses);
      // Parent: the platform loader, so the driver and the library load here, not from the application class path.
      ClassLoader loader = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
      Function<String, String> driver = (Function<String, String>) Class
          .forName(driverClass, true, loader).getConstructor().newInstance();
      drivers.put(label, driver);
      System.out.println("LOADED " + label + " " + driver.apply("VERSION"));
    }
    System.out.println("APP STARTED");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {
      int space = line.indexOf(' ');
      System.out.println(drivers.get(line.substring(0, space)).apply(line.substring(space + 1)));
      System.out.flush();
    }
  }
}
