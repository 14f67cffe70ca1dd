# One image for migrate, web, worker and beat; they differ only in their command (see docker-compose.yml).
FROM python:3.11-slim
# ENV_FILE empty: the image is configured by its environment alone, never by a stray development .env.
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 ENV_FILE=""
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN DEBUG=1 python manage.py collectstatic --no-input
RUN useradd --create-home moraljudge
USER moraljudge
EXPOSE 8000
# gthread: see docker-compose.yml. --keep-alive 75 (gunicorn's default is 2 s, nginx's own 75 s): in a burst a
# client waits seconds between sending requests on its connection or after opening it, and a gthread worker
# closes a connection idle past the keep-alive under a request already on its way, which the client sees as a
# dropped connection (benchmarks/burst.py: hundreds of such errors in 600 judges at concurrency 200).
CMD ["gunicorn", "moraljudge.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--worker-class", "gthread", "--threads", "4", "--keep-alive", "75"]
