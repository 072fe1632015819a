class Controller {
  void dispose() {}
}

void dispose(Object o) {}

class Screen {
  Controller? controller;
  Controller? other;

  void close() {
    // dispose(controller) in a comment is not a call
    if (controller != null) controller.dispose();
    if (controller != null) other.dispose();
    dispose(controller);
    dispose(
      other,
    );
    print("dispose(controller) inside a string is not a call");
  }
}
