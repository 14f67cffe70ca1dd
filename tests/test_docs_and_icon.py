"""The API docs page works without internet (Swagger UI from our static files) and every page has its icon."""

import re


def test_the_api_docs_page_loads_swagger_ui_from_our_static_files_not_a_cdn(staff_client):
    page = staff_client.get("/api/docs/").content.decode()
    assert not re.search(r"cdn|unpkg|jsdelivr|https?://", page.replace("http://testserver", ""), re.I)
    assets = re.findall(r'(?:src|href)="(/static/drf_spectacular_sidecar/[^"]+)"', page)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets)
    assert any(a.endswith(".css") for a in assets)
    for asset in assets:
        response = staff_client.get(asset)
        assert response.status_code == 200, asset
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert body, asset


def test_the_icon_is_served_at_the_site_root_and_linked_from_the_pages(client, db):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200
    assert icon["Content-Type"] in ("image/x-icon", "image/vnd.microsoft.icon")
    assert b"".join(icon.streaming_content)[:4] == b"\x00\x00\x01\x00"  # an ICO file
    home = client.get("/").content.decode()
    linked = re.search(r'<link rel="icon" href="([^"]+)">', home).group(1)
    assert linked.endswith("favicon.ico")
    assert client.get(linked).status_code == 200
