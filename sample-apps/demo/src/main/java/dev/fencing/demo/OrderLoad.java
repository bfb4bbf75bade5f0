package dev.fencing.demo;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The users of the Spring Boot service: a background thread that POSTs an order to every active replica every 50 ms
 * and keeps what each request came to. A replica is paused while it is frozen ({@link #pause} returns only when no
 * request to it is in flight), since a frozen JVM answers nobody and that is not the agent's doing.
 */
final class OrderLoad implements AutoCloseable {
  /** One request of the load: which replica, when it was sent (epoch ms), its status (-1: no answer), its item. */
  record Request(String replica, long at, int status, String item, String error) {
    boolean ok() {
      return status == 201;
    }
  }

  private final List<Replica> replicas = new CopyOnWriteArrayList<>();
  private final Map<String, Boolean> active = new ConcurrentHashMap<>();
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final Object inFlight = new Object();
  private final Thread thread;
  private volatile boolean running = true;

  OrderLoad() {
    thread = new Thread(this::run, "demo-order-load");
    thread.setDaemon(true);
    thread.start();
  }

  void add(Replica replica) {
    replicas.add(replica);
    active.put(replica.name, true);
  }

  void pause(Replica replica) {
    synchronized (inFlight) {
      active.put(replica.name, false);
    }
  }

  void resume(Replica replica) {
    active.put(replica.name, true);
  }

  /** Every request sent so far, in order. */
  List<Request> requests() {
    return new ArrayList<>(requests);
  }

  private void run() {
    int n = 0;
    while (running) {
      for (Replica r : replicas) {
        synchronized (inFlight) {
          if (!running || !active.get(r.name)) {
            continue;
          }
          n++;
          String item = "order-" + n;
          long at = System.currentTimeMillis();
          try {
            HttpResponse<String> response = r.post("/orders", "{\"item\":\"" + item + "\",\"quantity\":1}");
            requests.add(new Request(r.name, at, response.statusCode(), item,
                response.statusCode() == 201 ? null : abbreviate(response.body())));
          } catch (RuntimeException e) {
            requests.add(new Request(r.name, at, -1, item, abbreviate(e.toString())));
          }
        }
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private static String abbreviate(String s) {
    return s.length() > 200 ? s.substring(0, 200) + "..." : s;
  }

  /** Stops the load after the request in flight. */
  @Override
  public void close() {
    running = false;
    try {
      thread.join(15_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "the order load";
  }
}
