package dev.fencing.agent.it.apps;

import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.URL;
import java.util.ArrayList;
import java.util.List;
import org.example.modules.ModuleLoader;

/**
 * A host that deploys application code in its own module class loader ({@link ModuleLoader}: parent-last, never
 * delegating the agent's bootstrap package), as application servers and OSGi frameworks do. args[0]: the module's
 * class path (its classes, its JDBC driver, its HTTP client). Serves POST / and remembers the Fencing-Token each
 * request carried. Commands on stdin: {@code RUN <jdbc url>} (ModuleMain.run), {@code WRITE <jdbc url>}. Answers
 * {@code RESULT <what the module returned> received=<token the server saw>} or
 * {@code ERR <exception class>: <message> [caused by ...]}, naming every error the module's code saw.
 */
public final class ModuleApp {
  private ModuleApp() {}

  private static volatile String received = "none";

  public static void main(String[] args) throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      String t = exchange.getRequestHeaders().getFirst("Fencing-Token");
      received = t == null ? "none" : t;
      exchange.getRequestBody().readAllBytes();
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    server.start();
    String httpUrl = "http://127.0.0.1:" + server.getAddress().getPort() + "/";

    List<URL> jars = new ArrayList<>();
    for (String e : args[0].split(File.pathSeparator)) {
      jars.add(new File(e).toURI().toURL());
    }
    ModuleLoader module = new ModuleLoader("deployment.app", jars.toArray(new URL[0]), ModuleApp.class.getClassLoader());
    Class<?> main = Class.forName("org.example.modules.app.ModuleMain", true, module);
    System.out.println("APP STARTED");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null) {
      String[] cmd = line.split(" ", 2);
      try {
        Object result = cmd[0].equals("RUN")
            ? main.getMethod("run", String.class, String.class).invoke(null, cmd[1], httpUrl)
            : main.getMethod("write", String.class).invoke(null, cmd[1]);
        System.out.println("RESULT " + result + " received=" + received);
      } catch (java.lang.reflect.InvocationTargetException e) {
        StringBuilder sb = new StringBuilder("ERR ");
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
          sb.append(t == e.getCause() ? "" : " [caused by ").append(t.getClass().getName()).append(": ").append(t.getMessage())
              .append(t == e.getCause() ? "" : "]");
        }
        System.out.println(sb);
      }
      System.out.flush();
    }
    server.stop(0);
  }
}
