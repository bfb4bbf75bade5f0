package dev.fencing.fence.kafka;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The JDBC store's connection when the fence is configured by URL: one connection, opened on first use and reused,
 * since a consumer calls its interceptor from its single poll thread. {@link #getConnection()} hands out a view whose
 * {@code close()} keeps the connection open; {@link #reset()} drops it after a failure so that the next poll
 * reconnects. A pool passed as {@code fencing.fence.jdbc.datasource} replaces all this.
 */
final class SingleConnectionDataSource implements DataSource, AutoCloseable {

  private final String url;
  private final Properties properties = new Properties();
  private Connection connection;
  private Connection view;

  SingleConnectionDataSource(String url, String user, String password) {
    this.url = url;
    if (user != null) {
      properties.setProperty("user", user);
    }
    if (password != null) {
      properties.setProperty("password", password);
    }
  }

  @Override
  public synchronized Connection getConnection() throws SQLException {
    if (connection == null || connection.isClosed()) {
      connection = DriverManager.getConnection(url, properties);
      Connection target = connection;
      view = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
          (proxy, method, args) -> {
            if (method.getName().equals("close") && method.getParameterCount() == 0) {
              return null;   // kept for the next poll
            }
            try {
              return method.invoke(target, args);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
          });
    }
    return view;
  }

  /** Closes the connection; the next {@link #getConnection()} opens a new one. */
  synchronized void reset() {
    Connection c = connection;
    connection = null;
    view = null;
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        // broken already
      }
    }
  }

  @Override
  public void close() {
    reset();
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("the fence's connection has fixed credentials");
  }

  @Override
  public PrintWriter getLogWriter() {
    return null;
  }

  @Override
  public void setLogWriter(PrintWriter out) {
  }

  @Override
  public void setLoginTimeout(int seconds) {
  }

  @Override
  public int getLoginTimeout() {
    return 0;
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    throw new SQLFeatureNotSupportedException();
  }

  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    throw new SQLException("not a wrapper for " + iface.getName());
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this);
  }
}
